"""nerfacc 0.5.3: the one proven finding of `inplacefix check` on main e3574f0 (stop 49, prec49):
`render_transmittance_from_density` (volrend.py) computes `trans = torch.exp(-exclusive_sum(sigmas_dt,
packed_info))` (line 261; exp saves its result) and then writes `trans *= prefix_trans` (line 263)
when a `prefix_trans` is given. The path calls it with densities requiring grad and a prefix
transmittance, batched (packed_info None: exclusive_sum is torch.cumsum), then backward (the flattened
form, `ray_indices`/`packed_info`, runs nerfacc's CUDA kernels only: not run on this CPU machine; exp
saves its result on either branch); the control the same with the write made out of
place (`trans = trans * prefix_trans`, one line); the context nerfacc's own use: `rendering()` and
`render_weight_from_density` without `prefix_trans` (the branch does not run).
Real: it raises in the library's public call with the documented argument."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import rewritten, replaced
from nerfacc import volrend

function = volrend.render_transmittance_from_density
expect_line(function, 261, "trans = torch.exp(-exclusive_sum(sigmas_dt, packed_info))")
expect_line(function, 263, "trans *= prefix_trans")
FINDING = "nerfacc/volrend.py:263:IPF101"


def batched(prefix=True):
    def run():
        torch.manual_seed(0)
        t_starts = torch.linspace(0.0, 1.0, 8).repeat(4, 1)
        t_ends = t_starts + 0.125
        sigmas = torch.rand(4, 8, requires_grad=True)
        prefix_trans = torch.rand(4, 8) if prefix else None
        trans, alphas = volrend.render_transmittance_from_density(t_starts, t_ends, sigmas, prefix_trans=prefix_trans)
        (trans * alphas).sum().backward()
        assert sigmas.grad is not None
    return run


def weights_prefix():
    torch.manual_seed(0)
    t_starts = torch.linspace(0.0, 1.0, 8).repeat(4, 1)
    sigmas = torch.rand(4, 8, requires_grad=True)
    w, trans, alphas = volrend.render_weight_from_density(t_starts, t_starts + 0.125, sigmas, prefix_trans=torch.rand(4, 8))
    w.sum().backward()


def weights():
    torch.manual_seed(0)
    t_starts = torch.linspace(0.0, 1.0, 8).repeat(4, 1)
    sigmas = torch.rand(4, 8, requires_grad=True)
    w, trans, alphas = volrend.render_weight_from_density(t_starts, t_starts + 0.125, sigmas)
    w.sum().backward()


attempt(FINDING, "path", "render_transmittance_from_density(batched sigmas requiring grad, prefix_trans), backward",
        batched())
attempt(FINDING, "path", "render_weight_from_density(sigmas requiring grad, prefix_trans) (passes it on), backward",
        weights_prefix)
with replaced(volrend, "render_transmittance_from_density", rewritten(function, [
        ("trans *= prefix_trans", "trans = trans * prefix_trans")])):
    attempt(FINDING, "control", "line 263 as `trans = trans * prefix_trans` (out of place)", batched())
attempt(FINDING, "context", "the same without prefix_trans (the branch skipped)", batched(prefix=False))
attempt(FINDING, "context", "render_weight_from_density(sigmas requiring grad), no prefix_trans, backward", weights)
