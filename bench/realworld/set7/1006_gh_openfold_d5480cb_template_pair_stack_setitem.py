# source: https://github.com/aqlaboratory/openfold/commit/d5480cbe6916cd492b81f4b57b0bd0ac175ae9d4
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# OpenFold (AlphaFold 2 in PyTorch), openfold/model/template.py, TemplatePairStackBlock.forward: each template is
# processed as a slice of the template pair tensor, `single = z[..., templ_idx:templ_idx+1, :, :, :]`, through the
# triangle attention / multiplication / transition layers (whose LayerNorms save their inputs, views of z), and the
# result is written back with `z[..., templ_idx:templ_idx+1, :, :, :] = single`, overwriting what the first layer
# saved; training fails in backward. Commit d5480cb "Fix horrible in-place operation bug": the templates are
# `torch.unbind`-ed into a list, each is processed and stored back in the list, and `z = torch.cat(single_templates,
# dim=-4)`.
# The library module is 1006helpers_openfold_template.py (ref: 1006helpers_openfold_template_fixed.py).
# Stand-ins: see the helper's header for the sub-modules; 2 templates over 5 residues, c_t 8, dropout 0.25 in
# training mode; the template pair features are embedded by a linear layer (TemplatePairEmbedder) and the loss is
# the mean square of the stack's output.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
template = importlib.import_module("1006helpers_openfold_template")


def compute():
    torch.manual_seed(0)
    embedder = nn.Linear(6, 8)
    block = template.TemplatePairStackBlock(
        c_t=8, c_hidden_tri_att=4, c_hidden_tri_mul=4, no_heads=1, pair_transition_n=2, dropout_rate=0.25, inf=1e9)
    embedder.train()
    block.train()
    t_feats = torch.randn(1, 2, 5, 5, 6)
    mask = torch.ones(1, 2, 5, 5)
    mask[..., 4, :] = 0.0
    z = embedder(t_feats)
    z = block(z, mask, chunk_size=None)
    loss = (z ** 2).mean()
    loss.backward()
    grads = {"embedder." + n: p.grad for n, p in embedder.named_parameters()}
    grads.update({"block." + n: p.grad for n, p in block.named_parameters() if p.grad is not None})
    return grads


if __name__ == "__main__":
    compute()
