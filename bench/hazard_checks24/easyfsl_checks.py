"""easyfsl 1.5.0 (easyfsl/methods/pt_map.py:107, :111, :112 `PTMAP.compute_optimal_transport`): the proven findings
of `inplacefix check` (stop 56, fresh56, end of stop). The Sinkhorn loop starts from `transport_plan =
torch.exp(-lambda * cost_matrix)` (:106), whose output exp saves for backward, and then rescales it in place:
`transport_plan /= ...` (:107), `transport_plan *= ...` (:111, :112). With a cost matrix that requires grad (query
features from a backbone being trained: `PTMAP.forward` runs `compute_soft_assignments` on them, and an episodic
training step differentiates the soft assignments), backward raises. Each line is isolated by making the other two
write through `.data` (the same tensor, no version bump); the control makes all three write through `.data`.
`compute_optimal_transport` is compiled alone from the shipped file, with a stand-in self."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("easyfsl/methods/pt_map.py")
LINES = {107: "transport_plan /= transport_plan.sum(dim=(0, 1), keepdim=True)",
         111: "transport_plan *= (1 / (per_class_sums + 1e-10)).unsqueeze(1)",
         112: "transport_plan *= ("}
for n, text in LINES.items():
    assert linecache.getline(PATH, n).strip() == text, n
DATA = {107: "transport_plan.data /= transport_plan.sum(dim=(0, 1), keepdim=True)",
        111: "transport_plan.data *= (1 / (per_class_sums + 1e-10)).unsqueeze(1)",
        112: "transport_plan.data *= (instance_multiplication_factor / (transport_plan.sum(0) + 1e-10)).unsqueeze(0)"}


def run(shipped):
    """`shipped`: the line left as shipped (None: all three through .data)."""
    replace = {n: code for n, code in DATA.items() if n != shipped}
    ns = compile_alone(PATH, {"PTMAP.compute_optimal_transport"},
                       {"torch": torch, "Tensor": torch.Tensor, "MAXIMUM_SINKHORN_ITERATIONS": 1000},
                       replace=replace)

    def go():
        torch.manual_seed(0)
        query = torch.randn(10, 8, requires_grad=True)  # 5-way, 2 queries each
        prototypes = torch.randn(5, 8)
        cost = torch.cdist(query, prototypes) ** 2
        plan = ns["compute_optimal_transport"](types.SimpleNamespace(lambda_regularization=0.1), cost)
        plan.log().sum().backward()
        assert query.grad is not None
    return go


for n in LINES:
    FID = f"easyfsl/methods/pt_map.py:{n}:" + ("IPF101")
    attempt(FID, "path", f"Sinkhorn on a cost matrix from query features that require grad, :{n} as shipped, the "
            "other two through .data: raises", run(n))
    attempt(FID, "control", "all three through .data: runs", run(None))
