# source: https://github.com/mlcommons/algorithmic-efficiency/commit/ece090b3f52ce373a94716215e5f2a324ff75975
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# MLCommons AlgoPerf (algorithmic-efficiency), the PyTorch WMT Transformer with the `attention_temp` option (added
# two days earlier, 1cde4ce7, for the workload variants): MultiheadAttention.forward takes q, k, v from one
# projection, `q, k, v = self.in_proj(x).split(self.embed_dim, dim=2)`, reshapes q with `.view(...).transpose(1, 2)`
# and then scales it in place, `q.mul_(self.attention_temp)`. q is a view of an output of `split` (a function that
# returns multiple views), so training raises "Output 0 of Transpose is a view and is being modified inplace. This
# view is the output of a function that returns multiple views." Commit ece090b ("Remove in-place operation", by the
# author of 1cde4ce7) writes `q = self.attention_temp * q`.
# Library module: 3305helpers_wmt_models.py (ref: ..._fixed.py), the source's make_src_mask,
# TransformerEncoderLayer and MultiheadAttention. Stand-ins here: the workload's Encoder is reduced to a shared
# embedding, two of those layers (norm_first, dropout 0.1, attention_temp=1.6) and a final LayerNorm, trained for one
# Adam step with a token loss through the shared embedding (the workload trains the whole encoder-decoder on WMT);
# returned: the loss, gradients of the embedding and two attention projections, and a projection after the step.
import importlib
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
models = importlib.import_module("3305helpers_wmt_models")


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
