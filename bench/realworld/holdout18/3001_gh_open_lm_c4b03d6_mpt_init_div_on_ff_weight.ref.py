# reference fix for 3001: commit c4b03d6 in the library module (3001helpers_open_lm_model_fixed.py):
# `with torch.no_grad(): self._ff_w2.weight.div_(math.sqrt(2 * args.n_layers))` in Block.__init__.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
model_mod = importlib.import_module("3001helpers_open_lm_model_fixed")


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
