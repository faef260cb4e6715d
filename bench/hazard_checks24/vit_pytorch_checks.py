"""vit_pytorch 1.26.11, vit_nd_pope.py:84: `self.learned_bias.uniform_(-2. * pi, 0.)` in
`__init__` of an nn.Parameter, reported as the leaf error. Path: init_learned_bias_uniform=True
with grad on. Control: the default (False)."""

import _shim  # noqa: F401
from _check import attempt, expect_line
from vit_pytorch.vit_nd_pope import GoldenGatePoPENd

expect_line(GoldenGatePoPENd.__init__, 84, "self.learned_bias.uniform_(-2. * pi, 0.)")
attempt("vit_pytorch/vit_nd_pope.py:84:IPF105", "path", "GoldenGatePoPENd(init_learned_bias_uniform=True)",
        lambda: GoldenGatePoPENd(2, 2, 4, init_learned_bias_uniform=True))
attempt("vit_pytorch/vit_nd_pope.py:84:IPF105", "control", "the default init_learned_bias_uniform=False",
        lambda: GoldenGatePoPENd(2, 2, 4))
