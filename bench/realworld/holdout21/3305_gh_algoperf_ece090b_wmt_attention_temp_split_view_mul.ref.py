# reference fix for 3305: algorithmic-efficiency commit ece090b in the library module
# (3305helpers_wmt_models_fixed.py): `q = self.attention_temp * q`.
import importlib
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
models = importlib.import_module("3305helpers_wmt_models_fixed")


class Encoder(nn.Module):
    """Stand-in for the workload's Encoder: shared embedding, the source's TransformerEncoderLayer stack, final norm."""

    def __init__(self, vocab_size=32, d_model=16, nhead=4, nlayers=2, attention_temp=1.6):
        super().__init__()
        self.nhead = nhead
        self.shared_embedding = nn.Embedding(vocab_size, d_model)
        self.layers = nn.ModuleList([
            models.TransformerEncoderLayer(d_model, nhead, dim_feedforward=32, dropout_rate=0.1,
                                           attention_dropout_rate=0.1, attention_temp=attention_temp,
                                           norm_first=True)
            for _ in range(nlayers)])
        self.norm = nn.LayerNorm(d_model, eps=1e-6)

    def forward(self, src, inputs_segmentation=None):
        src = src.to(torch.int)
        src_mask = models.make_src_mask(src, inputs_segmentation, self.nhead)
        x = self.shared_embedding(src)
        for layer in self.layers:
            x = layer(x, src_mask=src_mask)
        return self.norm(x)


def compute():
    torch.manual_seed(0)
    model = Encoder()
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    src = torch.randint(1, 32, (2, 6))
    src[1, 4:] = 0  # padding
    targets = torch.randint(1, 32, (2, 6))
    memory = model(src)
    logits = memory @ model.shared_embedding.weight.t()
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    out = {
        "loss": loss.detach(),
        "embedding.grad": model.shared_embedding.weight.grad.clone(),
        "layer0.in_proj.grad": model.layers[0].self_attn.in_proj.weight.grad.clone(),
        "layer1.out_proj.grad": model.layers[1].self_attn.out_proj.weight.grad.clone(),
    }
    optimizer.step()
    out["layer0.in_proj.after_step"] = model.layers[0].self_attn.in_proj.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
