"""Doge `DogeCDMoE.forward` (transformers 5.24.0, modeling_doge.py:426 and the same code in
modular_doge.py:371): `routing_weights = F.softmax(scores)` (SoftmaxBackward saves its result), then
`routing_weights /= routing_weights.sum(...)` when `config.norm_topk_prob` (False by default).

Path: the MoE layer built from a tiny DogeConfig with norm_topk_prob=True, in training mode, hidden
states requiring grad, grad on, backward from its output. Control: norm_topk_prob=False (the default:
the write does not run). Both classes: the generated modeling file and the modular source.
Run: /work/venvs/real/bin/python bench/hazard_checks/doge_router_norm.py
"""

import torch
from _check import attempt, expect_line
from transformers import DogeConfig
from transformers.models.doge import modeling_doge, modular_doge

CASES = [("transformers/models/doge/modeling_doge.py:426:IPF101", modeling_doge.DogeCDMoE, 426),
         ("transformers/models/doge/modular_doge.py:371:IPF101", modular_doge.DogeCDMoE, 371)]


def moe_step(moe_class, norm):
    def run():
        torch.manual_seed(0)
        config = DogeConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                            num_attention_heads=2, num_key_value_heads=1, num_experts=16, num_experts_per_tok=4,
                            is_moe=True, norm_topk_prob=norm)
        moe = moe_class(config).train()
        hidden, _ = moe(torch.randn(1, 3, 16, requires_grad=True))
        hidden.sum().backward()
    return run


for finding, moe_class, line in CASES:
    expect_line(moe_class.forward, line, "routing_weights /= routing_weights.sum(dim=-1, keepdim=True)")
    attempt(finding, "path", "MoE layer, norm_topk_prob=True, training, inputs require grad, backward",
            moe_step(moe_class, True))
    attempt(finding, "control", "the same with norm_topk_prob=False (the config default: no write)",
            moe_step(moe_class, False))
