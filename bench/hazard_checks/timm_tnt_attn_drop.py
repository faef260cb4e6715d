"""timm TNT `Attention` (timm 1.0.31, models/tnt.py:53): `self.attn_drop = nn.Dropout(attn_drop,
inplace=True)` is applied to `attn.softmax(dim=-1)` (SoftmaxBackward saves its result) at line 65.

Path: the attention block with attn_drop=0.1 in training mode, inputs requiring grad, grad on,
backward. Control: attn_drop=0.0 (then dropout returns its input untouched); context: eval mode
(dropout off). timm's TNT models default to attn_drop_rate=0.
Run: /work/venvs/real/bin/python bench/hazard_checks/timm_tnt_attn_drop.py
"""

import torch
from _check import attempt, expect_line
from timm.models.tnt import Attention

FINDING = "timm/models/tnt.py:53:IPF102"
expect_line(Attention.__init__, 53, "self.attn_drop = nn.Dropout(attn_drop, inplace=True)")
expect_line(Attention.forward, 65, "attn = self.attn_drop(attn)")


def block(p, training=True):
    def run():
        torch.manual_seed(0)
        attention = Attention(dim=8, hidden_dim=8, num_heads=2, attn_drop=p).train(training)
        attention(torch.randn(1, 4, 8, requires_grad=True)).sum().backward()
    return run


attempt(FINDING, "path", "attention with attn_drop=0.1, training, inputs require grad, backward", block(0.1))
attempt(FINDING, "control", "the same with attn_drop=0.0", block(0.0))
attempt(FINDING, "context", "attn_drop=0.1 in eval mode", block(0.1, training=False))
