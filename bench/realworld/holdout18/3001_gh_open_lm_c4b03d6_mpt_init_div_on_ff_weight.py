# source: https://github.com/mlfoundations/open_lm/commit/c4b03d6f66f768c8971ff790f711f95ce61c5551
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# open_lm (a language-model training repository), open_lm/model.py: with `ffn_type="gelu"` (the MosaicML MPT
# feed-forward), Block.__init__ initialises the two feed-forward Linears with kaiming_normal_ / zeros_ and then scales
# the second one down by depth with `self._ff_w2.weight.div_(math.sqrt(2 * args.n_layers))`. __init__ runs with grad
# mode on and the weight is a Parameter, so building the model raises "a leaf Variable that requires grad is being used
# in an in-place operation". Commit c4b03d6 ("Divide weight in no_grad") puts the division under
# `with torch.no_grad():`.
# The library module is 3001helpers_open_lm_model.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a two-layer model of width 16 with 2 heads over a 23-token vocabulary, one random batch of 2 x 7
# tokens, next-token cross-entropy, one backward pass.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
model_mod = importlib.import_module("3001helpers_open_lm_model")


def compute():
    torch.manual_seed(0)
    params = model_mod.Params(dim=16, n_layers=2, n_heads=2, vocab_size=23, seq_len=8, ffn_type="gelu")
    model = model_mod.Transformer(params)
    tokens = torch.randint(0, 23, (2, 8))
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 23), tokens[:, 1:].reshape(-1))
    loss.backward()
    return {
        "loss": loss.detach(),
        "layers.0._ff_w2.weight": model.layers[0]._ff_w2.weight.detach().clone(),
        "layers.1._ff_w2.weight": model.layers[1]._ff_w2.weight.detach().clone(),
        "layers.0._ff_w2.weight.grad": model.layers[0]._ff_w2.weight.grad,
        "layers.1._ff_w1.weight.grad": model.layers[1]._ff_w1.weight.grad,
        "layers.0.attention.in_proj.weight.grad": model.layers[0].attention.in_proj.weight.grad,
        "tok_embeddings.weight.grad": model.tok_embeddings.weight.grad,
    }


if __name__ == "__main__":
    compute()
