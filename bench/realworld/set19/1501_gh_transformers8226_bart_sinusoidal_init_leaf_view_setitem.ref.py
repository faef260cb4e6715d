# source: https://github.com/huggingface/transformers/pull/8226
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# REFERENCE (PR #8226: requires_grad switched off before the writes, in the fixed helper).
# huggingface/transformers, BART/Marian/Pegasus `SinusoidalPositionalEmbedding._init_weight`: the weight of an
# nn.Embedding (a Parameter, a leaf that requires grad) is filled with the sinusoid table by slice assignment,
# `out[:, 0 : dim // 2] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))`, and only afterwards detached and frozen:
# "RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation" from PyTorch 1.8
# on (issue #8021). Fix (PR #8226, merged): `out.requires_grad = False  # set early to avoid an error in pytorch-1.8+`
# before the writes (plus an odd-dimension sentinel that does not change even dimensions).
# The library module is 1501helpers_transformers_bart_positions.py (ref: ..._fixed.py).
# Stand-ins: numpy replaced by torch in the helper (see its header); a toy seq2seq-style encoder in place of BART
# (token embedding scaled by sqrt(d_model), positions added, a LayerNorm, an LM head); one training step.
import importlib
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
bart_positions = importlib.import_module("1501helpers_transformers_bart_positions_fixed")


class TinyEncoder(nn.Module):
    def __init__(self, vocab=20, d_model=8, max_positions=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d_model, padding_idx=1)
        self.embed_scale = math.sqrt(d_model)
        self.embed_positions = bart_positions.SinusoidalPositionalEmbedding(max_positions, d_model, 1)
        self.layernorm_embedding = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab)

    def forward(self, input_ids):
        inputs_embeds = self.embed_tokens(input_ids) * self.embed_scale
        embed_pos = self.embed_positions(input_ids)
        x = self.layernorm_embedding(inputs_embeds + embed_pos)
        return self.lm_head(x)


def compute():
    torch.manual_seed(0)
    model = TinyEncoder()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    input_ids = torch.randint(2, 20, (3, 6))
    labels = torch.randint(2, 20, (3, 6))
    logits = model(input_ids)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
    opt.zero_grad()
    loss.backward()
    out = {name: p.grad.clone() for name, p in model.named_parameters() if p.requires_grad}
    opt.step()
    out["loss"] = loss.detach()
    out["positions_table"] = model.embed_positions.weight.detach().clone()
    out["tokens_after"] = model.embed_tokens.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
