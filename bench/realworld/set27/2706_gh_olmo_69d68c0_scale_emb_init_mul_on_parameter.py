# source: https://github.com/allenai/OLMo/commit/69d68c0b75183a67d4b6aaab0de83008b5083d1d
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# OLMo (AI2's open language model), olmo/initialization.py, init_weights: with the `scale_emb_init` option (added
# for the training-stability runs, "--model.scale_emb_init=true") the token embedding is scaled after its normal
# init with `module.weight.mul_(math.sqrt(config.d_model))`, outside any no_grad block; the embedding weight is a
# Parameter that requires grad, so building the model fails with "a leaf Variable that requires grad is being used
# in an in-place operation". The nn.init calls before it run under no_grad internally, and the residual scaling a
# few lines below already sits in `with torch.no_grad():`. Commit 69d68c0 ("fix regression"; the same change as
# e21df3d "fixes" on a branch) wraps the scaling in `with torch.no_grad():`.
# The library module is 2706helpers_olmo_initialization.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a two-block OLMo-like model (d_model 16, vocabulary 32, an MLP-only block with ff_proj / ff_out,
# the residual ff_out marked `_is_residual`) whose reset_parameters follows OLMo.reset_parameters and
# OLMoBlock.reset_parameters (init_weights on wte as ModuleType.emb, on the output layer as final_out, on each
# block's ff_proj / ff_out); config: the default "normal" init with scale_emb_init=True; one next-token loss on a
# random batch of token ids.
import importlib
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
init = importlib.import_module("2706helpers_olmo_initialization")


class Block(nn.Module):
    def __init__(self, config, layer_id):
        super().__init__()
        self.config = config
        self.layer_id = layer_id
        self.ff_norm = nn.LayerNorm(config.d_model)
        self.ff_proj = nn.Linear(config.d_model, 4 * config.d_model, bias=False)
        self.ff_out = nn.Linear(4 * config.d_model, config.d_model, bias=False)
        self.ff_out._is_residual = True

    def reset_parameters(self):
        self.ff_norm.reset_parameters()
        init.init_weights(self.config, self.ff_proj, d=self.config.d_model, layer_id=None,
                          type_of_module=init.ModuleType.in_module)
        init.init_weights(self.config, self.ff_out, d=self.ff_out.in_features, layer_id=self.layer_id,
                          type_of_module=init.ModuleType.out_module)

    def forward(self, x):
        return x + self.ff_out(F.gelu(self.ff_proj(self.ff_norm(x))))


class TinyOLMo(nn.Module):
    def __init__(self, config, vocab_size=32):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, config.d_model),
            blocks=nn.ModuleList([Block(config, i) for i in range(config.n_layers)]),
            ln_f=nn.LayerNorm(config.d_model),
            ff_out=nn.Linear(config.d_model, vocab_size, bias=False),
        ))

    def reset_parameters(self):
        # Top-level embeddings / linear layers.
        init.init_weights(
            self.config,
            self.transformer.wte,
            std_factor=(0.5 * math.sqrt(self.config.d_model)) if self.config.scale_logits else 1.0,
            type_of_module=init.ModuleType.emb,
        )
        # Top-level layer norm.
        self.transformer.ln_f.reset_parameters()
        # Output weights.
        init.init_weights(self.config, self.transformer.ff_out, type_of_module=init.ModuleType.final_out)
        # Let the blocks handle themselves.
        for block in self.transformer.blocks:
            block.reset_parameters()

    def forward(self, input_ids):
        x = self.transformer.wte(input_ids)
        for block in self.transformer.blocks:
            x = block(x)
        return self.transformer.ff_out(self.transformer.ln_f(x))


def compute():
    torch.manual_seed(0)
    config = init.ModelConfig(d_model=16, n_layers=2, init_fn=init.InitFnType.normal, scale_emb_init=True)
    model = TinyOLMo(config)
    model.reset_parameters()
    input_ids = torch.randint(0, 32, (2, 6))
    logits = model(input_ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 32), input_ids[:, 1:].reshape(-1))
    loss.backward()
    return {
        "wte.weight": model.transformer.wte.weight.detach(),
        "wte.weight.grad": model.transformer.wte.weight.grad,
        "block0.ff_proj.weight.grad": model.transformer.blocks[0].ff_proj.weight.grad,
        "ff_out.weight.grad": model.transformer.ff_out.weight.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
