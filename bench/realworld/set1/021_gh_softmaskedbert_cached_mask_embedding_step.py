# source: https://github.com/hiyoung123/SoftMaskedBert/issues/16
# pattern: other
# codemod_fixable: no
# error: A
# ref_semantics: differs
# SoftMaskedBert caches `self.mask_e = self.embedding(mask_token_id)` (with its graph) in __init__; every step reuses it
# with loss.backward(retain_graph=True), and optimizer.step() updates the embedding's LayerNorm weight in place, so the
# second step's backward through the stale graph fails. Fix from the thread: .detach() the cached embedding.
# transformers is not available in the eval env: BertEmbeddings/BertEncoder are replaced by tiny stand-ins.
import torch
import torch.nn as nn


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_position=32):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(max_position, hidden_size)
        self.token_type_embeddings = nn.Embedding(2, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size)
        self.dropout = nn.Dropout(0.0)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        token_type_ids = torch.zeros_like(input_ids)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids) \
            + self.token_type_embeddings(token_type_ids)
        embeddings = self.LayerNorm(embeddings)
        return self.dropout(embeddings)


class BertEncoder(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(hidden_size, 2, 2 * hidden_size, dropout=0.0, batch_first=True)

    def forward(self, hidden_states, attention_mask=None, head_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None):
        return (self.layer(hidden_states),)


class BiGRU(nn.Module):
    def __init__(self, embedding_size, hidden, n_layers, dropout=0.0):
        super(BiGRU, self).__init__()
        self.rnn = nn.GRU(embedding_size, hidden, num_layers=n_layers,
                          bidirectional=True, dropout=dropout, batch_first=True)
        self.linear = nn.Linear(hidden * 2, 1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        out, _ = self.rnn(x)
        prob = self.sigmoid(self.linear(out))
        return prob


class SoftMaskedBert(nn.Module):
    """
    Soft-Masked Bert
    """
    def __init__(self, embeddings, encoder, vocab_size, mask_token_id, hidden, layer_n):
        super(SoftMaskedBert, self).__init__()
        self.embedding = embeddings
        self.embedding_size = embeddings.word_embeddings.embedding_dim

        self.detector = BiGRU(self.embedding_size, hidden, layer_n)
        self.corrector = encoder
        mask_token_id = torch.tensor([[mask_token_id]])
        self.mask_e = self.embedding(mask_token_id)
        self.linear = nn.Linear(self.embedding_size, vocab_size)
        self.softmax = nn.LogSoftmax(dim=-1)

    def forward(self, input_ids):
        e = self.embedding(input_ids)
        p = self.detector(e)
        e_ = p * self.mask_e + (1-p) * e
        h = self.corrector(e_)
        h = h[0] + e
        out = self.softmax(self.linear(h))
        return out, p


def compute():
    torch.manual_seed(0)
    vocab_size, hidden_size, gama = 30, 8, 0.8
    model = SoftMaskedBert(BertEmbeddings(vocab_size, hidden_size), BertEncoder(hidden_size),
                           vocab_size, mask_token_id=3, hidden=4, layer_n=1)
    optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion_c = nn.NLLLoss()
    criterion_d = nn.BCELoss()
    grads = {}
    for step in range(2):
        input_ids = torch.randint(0, vocab_size, (2, 6))
        output_ids = torch.randint(0, vocab_size, (2, 6))
        label = torch.randint(0, 2, (2, 6))
        out, prob = model(input_ids)
        prob = prob.reshape(-1, prob.shape[1])
        loss_d = criterion_d(prob, label.float())
        loss_c = criterion_c(out.transpose(1, 2), output_ids)
        loss = gama * loss_c + (1 - gama) * loss_d
        optim.zero_grad()
        loss.backward(retain_graph=True)
        grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        optim.step()
    return grads  # gradients of the second step


if __name__ == "__main__":
    compute()
