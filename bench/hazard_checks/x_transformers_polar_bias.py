"""x-transformers `PolarEmbedding.__init__` (x_transformers 2.31.10, x_transformers.py:936):
`self.learned_bias.uniform_(-2. * math.pi, 0.)` on an nn.Parameter when bias_uniform_init=True.

Path: building the module with bias_uniform_init=True, grad on: PyTorch refuses the in-place update
of a leaf that requires grad. Control: bias_uniform_init=False (the default). Context: built under
torch.no_grad() (no error: the usual way to initialise a parameter in place).
Run: /work/venvs/real/bin/python bench/hazard_checks/x_transformers_polar_bias.py
"""

import torch
from _check import attempt, expect_line
from x_transformers.x_transformers import PolarEmbedding

FINDING = "x_transformers/x_transformers.py:936:IPF105"
expect_line(PolarEmbedding.__init__, 936, "self.learned_bias.uniform_(-2. * math.pi, 0.)")


def build(uniform):
    return lambda: PolarEmbedding(dim=8, heads=2, bias_uniform_init=uniform)


def build_without_grad():
    with torch.no_grad():
        PolarEmbedding(dim=8, heads=2, bias_uniform_init=True)


attempt(FINDING, "path", "PolarEmbedding(bias_uniform_init=True) built with grad on", build(True))
attempt(FINDING, "control", "PolarEmbedding(bias_uniform_init=False), the default", build(False))
attempt(FINDING, "context", "PolarEmbedding(bias_uniform_init=True) built under torch.no_grad()", build_without_grad)
