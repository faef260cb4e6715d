# source: https://github.com/Hunter-DDM/knowledge-neurons/issues/14
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Knowledge editing: `...output.dense.weight[:, pos] -= ori_pred_emb * lambda` on a Parameter with grad mode on.
import torch
import torch.nn as nn
import torch.nn.functional as F


class _Output(nn.Module):
    def __init__(self, inter, hidden):
        super().__init__()
        self.dense = nn.Linear(inter, hidden)


class _Layer(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.intermediate = nn.Linear(hidden, inter)
        self.output = _Output(inter, hidden)

    def forward(self, h):
        return h + self.output.dense(F.gelu(self.intermediate(h)))


class _Encoder(nn.Module):
    def __init__(self, hidden, inter, n_layers):
        super().__init__()
        self.layer = nn.ModuleList([_Layer(hidden, inter) for _ in range(n_layers)])


class _Embeddings(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)


class _Bert(nn.Module):
    def __init__(self, vocab=20, hidden=8, inter=16, n_layers=2):
        super().__init__()
        self.embeddings = _Embeddings(vocab, hidden)
        self.encoder = _Encoder(hidden, inter, n_layers)


class BertForMaskedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = _Bert()

    def forward(self, input_ids, tgt_pos):
        h = self.bert.embeddings.word_embeddings(input_ids)
        for layer in self.bert.encoder.layer:
            h = layer(h)
        return h[:, tgt_pos] @ self.bert.embeddings.word_embeddings.weight.t()  # (1, n_vocab)


def compute():
    torch.manual_seed(0)
    model = BertForMaskedLM()
    input_ids = torch.randint(0, 20, (1, 6))
    tgt_pos, tgt_label_id = 3, 5
    norm_lambda1, norm_lambda2 = 1.0, 1.0
    kn_bag = [(0, 2), (1, 7), (1, 11)]

    logits = model(input_ids, tgt_pos)
    ori_pred_label_id = logits[0].argmax()

    # edit knowledge
    ori_pred_emb = model.bert.embeddings.word_embeddings.weight[ori_pred_label_id.item()]
    tgt_emb = model.bert.embeddings.word_embeddings.weight[tgt_label_id]
    lambda_list_1 = []
    lambda_list_2 = []
    ori_pred_emb_norm = torch.norm(ori_pred_emb)
    tgt_emb_norm = torch.norm(tgt_emb)
    for layer, pos in kn_bag:
        value_norm = torch.norm(model.bert.encoder.layer[layer].output.dense.weight[:, pos])
        lambda_list_1.append(value_norm / ori_pred_emb_norm * norm_lambda1)
        lambda_list_2.append(value_norm / tgt_emb_norm * norm_lambda2)
    for i, (layer, pos) in enumerate(kn_bag):
        model.bert.encoder.layer[layer].output.dense.weight[:, pos] -= ori_pred_emb * lambda_list_1[i]
        model.bert.encoder.layer[layer].output.dense.weight[:, pos] += tgt_emb * lambda_list_2[i]

    logits = model(input_ids, tgt_pos)
    loss = F.cross_entropy(logits, torch.tensor([tgt_label_id]))
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
