"""Runtime repair on real-report shapes of the view family (C) and the leaf family (B)
(issue 23). Each case is written from a public report, not copied from ../shared/corpus:

- timm's ViT ``Attention`` (timm/models/vision_transformer.py): weights set by
  ``self.apply(self._init_weights)`` (``trunc_normal_``, ``constant_(m.bias, 0)``), then the query
  scaled in place on an output of ``chunk`` (the "Output 0 of SplitBackward0 is a view" reports
  on lucidrains' and timm's attention). The view-family references watch the run with a torch
  function mode of their own; what that mode looks at (``_is_view``, storages) must not count as
  the program reading its leaves, or every leaf initialised after it is made looks changed
  on the reference's side only.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.verify import Verdict, verify  # noqa: E402

VIT_ATTENTION = '''\
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            nn.init.constant_(m.bias, 0)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q *= self.scale
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj(attn @ v)


def compute():
    torch.manual_seed(0)
    blk = Attention(8, 2)
    x = torch.randn(2, 5, 8)
    blk(x).pow(2).mean().backward()
    return {n: p.grad for n, p in blk.named_parameters()}
'''


def test_a_view_fix_verifies_where_the_leaves_are_initialised_after_they_are_made(tmp_path):
    path = tmp_path / "vit.py"
    path.write_text(VIT_ATTENTION)
    fixed = VIT_ATTENTION.replace("q *= self.scale", "q = q * self.scale")
    device = verify(f"{path}::compute", rewritten_source=fixed, devices=["cpu"], timeout=120).devices[0]
    assert device.reference == "writes into copies"
    assert device.verdict is Verdict.VERIFIED, device.differences
    wrong = VIT_ATTENTION.replace("q *= self.scale", "q = q * self.scale * 2")
    device = verify(f"{path}::compute", rewritten_source=wrong, devices=["cpu"], timeout=120).devices[0]
    assert device.verdict is Verdict.NOT_VERIFIED
