"""transformer-lens 4.3.0: the one proven finding of `inplacefix check` (eafcde2, stop 47):
`_nonnegative_least_squares` (tools/analysis/jacobian_lens_decomposition.py:303) writes
`passive[int(torch.argmax(dual))] = True` after `dual = dual.masked_fill(passive, -inf)` saved the
mask `passive`. `import transformer_lens` needs datasets, transformers and more: the function runs
from the installed file's source (`functions_from`). The path has the target and the atoms requiring
grad (float64 work copies keep the graph) and runs backward from the coefficients returned: it runs.
`dual` is used only by comparisons, `bool(...)` and `argmax` (no gradient flows from those), so the
masked_fill's backward, which would read the mask, is never reached: false (group
saved-by-unused-result). A look-alike that backpropagates through `dual` itself raises (context)."""

import _shim  # noqa: F401

import importlib.util

import torch
from _check import attempt, expect_line, run_through
from _rewrite import functions_from

ROOT = importlib.util.find_spec("transformer_lens").submodule_search_locations[0]
PATH = ROOT + "/tools/analysis/jacobian_lens_decomposition.py"
FINDING = "transformer_lens/tools/analysis/jacobian_lens_decomposition.py:303:IPF104"
ns = functions_from(PATH, ["_nonnegative_least_squares", "_nnls_tolerances", "_validate_nnls_kkt",
                           "_NNLS_RANK_RTOL", "_NNLS_RELATIVE_TOLERANCE"])
nnls = ns["_nonnegative_least_squares"]
expect_line(nnls, 303, "passive[int(torch.argmax(dual))] = True")


def inputs():
    torch.manual_seed(0)
    atoms = torch.randn(8, 4, requires_grad=True)
    target = (atoms.detach() @ torch.tensor([1.0, 0.0, 2.0, 0.5]) + 0.01 * torch.randn(8)).requires_grad_()
    return atoms, target


def path():
    atoms, target = inputs()
    nnls(atoms, target).sum().backward()
    assert target.grad is not None


attempt(FINDING, "path", "_nonnegative_least_squares(atoms and target requiring grad), backward from the result", path)


def through_dual():
    atoms, target = inputs()
    local = run_through(nnls, 303, atoms, target)
    local["dual"].masked_fill(local["dual"].isinf(), 0.0).sum().backward()


attempt(FINDING, "context", "stopped after line 303, backward from `dual` itself (no use of the library does)",
        through_dual)
