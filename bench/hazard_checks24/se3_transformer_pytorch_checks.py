"""se3-transformer-pytorch 0.9.0: the one proven finding of `inplacefix check` (b47935c, stop 46):
`get_spherical_from_cartesian` (basis.py:92) takes `radius = torch.sqrt(...)` and, when
`divide_radius_by != 1.0`, divides it in place: sqrt saved its result for its backward. The path
calls it with cartesian coordinates requiring grad and `divide_radius_by=2.0`, then backward; the
control has line 92 out of place. The library's own caller (`get_basis`) leaves the default 1.0,
where the branch does not run (`context`): real by this file's convention."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import rewritten
from se3_transformer_pytorch import basis

FINDING = "se3_transformer_pytorch/basis.py:92:IPF101"
function = basis.get_spherical_from_cartesian
expect_line(function, 89, "radius = torch.sqrt(r_xy + cartesian[...,cartesian_z]**2)")
expect_line(function, 92, "radius /= divide_radius_by")


def spherical(fn, divide):
    def run():
        torch.manual_seed(0)
        cartesian = torch.randn(5, 3, requires_grad=True)
        fn(cartesian, divide_radius_by=divide).sum().backward()
    return run


attempt(FINDING, "path", "get_spherical_from_cartesian(cartesian requiring grad, divide_radius_by=2.0), backward",
        spherical(function, 2.0))
attempt(FINDING, "control", "line 92 out of place (`radius = radius / divide_radius_by`)",
        spherical(rewritten(function, [("radius /= divide_radius_by", "radius = radius / divide_radius_by")]), 2.0))
attempt(FINDING, "context", "the default divide_radius_by=1.0 (get_basis's call)", spherical(function, 1.0))
