"""torchao 0.18.0: the six proven findings of `inplacefix check` (main at a4c47fa, stop 44).

- `UnifQuantizer.quantize` (torchao/prototype/parq/quant/uniform.py:90, :98, :111): the report says
  `q` was saved by `get_q_max` (`q.abs()`, line 21) and then written (`q.copy_`, the chain
  `q.div_(s)...mul_(s)`, `q += mean`). But `q` is `p.detach().clone()` (or `remove_mean(p.detach())`
  with `center=True`, for line 111): it never requires grad, so `abs` saves nothing. The path runs
  `quantize` with a weight that requires grad, both `center` values, and backward through the
  returned values that carry grad (none do: the check is that nothing raises and no output
  requires grad).
- `ProxLasso.apply_` (torchao/prototype/pat/optim/lasso.py:27): `mult = (1 - t / p.abs()).clamp(min=0)`
  (`abs` saves `p`), then `p.mul_(mult)`. The path calls it with a `p` that requires grad (a
  non-leaf: a leaf raises the leaf error at the write itself) and backward through its results;
  the control the same with `p = p.mul(mult)`; the context: the pruning optimizer calls it under
  `@torch.no_grad()` (pruneopt.py), where nothing is saved.
- The Float8 `aten.addmm_` implementations (torchao/quantization/quantize_/workflows/float8/
  float8_tensor.py:313 and prototype/quantization/float8_static_quant/prototype_float8_tensor.py:326)
  are not run: the report calls `bias_tensor` and `input_tensor` "views of one tensor" because both
  are items of the dispatcher's `args` tuple (`args[0]`, `args[1]`), which are distinct tensors,
  and `__torch_dispatch__` runs below autograd, where nothing is saved for backward."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import replaced, rewritten
from torchao.prototype.parq.quant.uniform import UnifQuantizer
from torchao.prototype.pat.optim.lasso import ProxLasso

Q = {90: "q.copy_(torch.minimum(torch.maximum(q, -q_max), q_max))",
     98: "q.div_(s).sub_(self.zero_point).round_().add_(self.zero_point).mul_(s)",
     111: "q += mean"}
for line, text in Q.items():
    expect_line(UnifQuantizer.quantize, line, text)
expect_line(ProxLasso.apply_, 26, "mult = (1 - self.threshold(p, gamma) / self._get_norm(p)).clamp(min=0)")
expect_line(ProxLasso.apply_, 27, "p.mul_(mult)")


def quantize(center):
    def run():
        torch.manual_seed(0)
        p = torch.randn(4, 8, requires_grad=True)
        q, levels = UnifQuantizer(center=center).quantize(p * 1.0, 2)
        carried = [t for t in (q, levels) if t.requires_grad]
        if carried:  # (none: q is computed from p.detach())
            sum(t.sum() for t in carried).backward()
    return run


for line in Q:
    center = line == 111
    attempt(f"torchao/prototype/parq/quant/uniform.py:{line}:IPF{101 if line == 111 else 103}", "path",
            f"UnifQuantizer(center={center}).quantize(weight requiring grad, b=2), backward through any output "
            "that requires grad", quantize(center))


def prox(edits=(), grad=True):
    def run():
        torch.manual_seed(0)
        apply = rewritten(ProxLasso.apply_, edits) if edits else ProxLasso.apply_
        w = torch.randn(4, 8, requires_grad=True)
        with replaced(ProxLasso, "apply_", apply), torch.set_grad_enabled(grad):
            zeros, norm = ProxLasso(0.5).apply_(w * 1.0, 0.1)
        if grad:
            norm.sum().backward()
    return run


LASSO = "torchao/prototype/pat/optim/lasso.py:27:IPF103"
attempt(LASSO, "path", "ProxLasso(0.5).apply_(weight requiring grad, non-leaf, 0.1), backward", prox())
attempt(LASSO, "control", "the same with `p = p.mul(mult)` (line 27 out of place; the norm then reads the old p)",
        prox([("p.mul_(mult)", "p = p.mul(mult)")]))
attempt(LASSO, "context", "under torch.no_grad() (the pruning optimizer's step)", prox(grad=False))
