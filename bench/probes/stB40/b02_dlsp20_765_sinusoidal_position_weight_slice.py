# source: https://github.com/Atcold/NYU-DLSP20/issues/765
# error: B (the sinusoidal table is written into an nn.Embedding's weight, a leaf that requires grad, by slices)
import math

import torch
import torch.nn as nn


def create_sinusoidal_embeddings(nb_p, dim, E):
    pos = torch.arange(nb_p, dtype=torch.float32)[:, None]
    j = torch.arange(dim, dtype=torch.float32)[None, :]
    theta = pos / torch.pow(10000.0, 2 * torch.div(j, 2, rounding_mode="floor") / dim)
    E[:, 0::2] = torch.sin(theta[:, 0::2])
    E[:, 1::2] = torch.cos(theta[:, 1::2])
    E.detach_()
    E.requires_grad = False


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab_size, max_position_embeddings):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, d_model, padding_idx=1)
        self.position_embeddings = nn.Embedding(max_position_embeddings, d_model)
        create_sinusoidal_embeddings(nb_p=max_position_embeddings, dim=d_model, E=self.position_embeddings.weight)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0).expand_as(input_ids)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.layer_norm(embeddings)


def main():
    torch.manual_seed(0)
    emb = Embeddings(8, 20, 16)
    out = emb(torch.randint(0, 20, (2, 5)))
    out.sum().backward()
    return [out.detach(), emb.word_embeddings.weight.grad]
