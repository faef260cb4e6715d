# source: https://github.com/Atcold/NYU-DLSP20/issues/765
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# create_sinusoidal_embeddings writes E[:, 0::2] = ... into nn.Embedding.weight (a leaf Parameter) with grad enabled
# ("a view of a leaf Variable that requires grad is being used in an in-place operation").
# numpy is not available in the eval env, so np.sin/np.cos/np.power were replaced by their torch equivalents.
import torch
import torch.nn as nn


def create_sinusoidal_embeddings(nb_p, dim, E):
    theta = torch.tensor([
        [p / (10000 ** (2 * (j // 2) / dim)) for j in range(dim)]
        for p in range(nb_p)
    ], dtype=torch.float64)
    E[:, 0::2] = torch.sin(theta[:, 0::2]).float()
    E[:, 1::2] = torch.cos(theta[:, 1::2]).float()
    E.detach_()
    E.requires_grad = False


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab_size, max_position_embeddings, p):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, d_model, padding_idx=1)
        self.position_embeddings = nn.Embedding(max_position_embeddings, d_model)
        create_sinusoidal_embeddings(
            nb_p=max_position_embeddings,
            dim=d_model,
            E=self.position_embeddings.weight
        )

        self.LayerNorm = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long, device=input_ids.device)  # (max_seq_length)
        position_ids = position_ids.unsqueeze(0).expand_as(input_ids)                      # (bs, max_seq_length)

        # Get word embeddings for each input id
        word_embeddings = self.word_embeddings(input_ids)                   # (bs, max_seq_length, dim)

        # Get position embeddings for each position id
        position_embeddings = self.position_embeddings(position_ids)        # (bs, max_seq_length, dim)

        # Add them both
        embeddings = word_embeddings + position_embeddings  # (bs, max_seq_length, dim)

        # Layer norm
        embeddings = self.LayerNorm(embeddings)             # (bs, max_seq_length, dim)
        return embeddings


class TransformerClassifier(nn.Module):
    def __init__(self, d_model, input_vocab_size, num_answers, max_position_embeddings=16):
        super().__init__()
        self.embedder = Embeddings(d_model, input_vocab_size, max_position_embeddings, p=0.0)
        self.dense = nn.Linear(d_model, num_answers)

    def forward(self, x):
        x = self.embedder(x)
        x, _ = torch.max(x, dim=1)
        return self.dense(x)


def compute():
    torch.manual_seed(0)
    model = TransformerClassifier(d_model=8, input_vocab_size=30, num_answers=2)
    x = torch.randint(0, 30, (3, 7))
    y = torch.tensor([0, 1, 1])
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters() if p.requires_grad}


if __name__ == "__main__":
    compute()
