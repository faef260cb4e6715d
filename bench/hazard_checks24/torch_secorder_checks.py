"""torch-secorder 0.0.1 (torch_secorder/analysis/eigensolvers.py:115 `lanczos`): the proven finding of `inplacefix
check` (stop 57, fresh57, end of stop). Each Lanczos step stores its vector in the basis, `V[:, i] = v` (:115), and
then takes `w = w - beta * V[:, i - 1]` (:118): the product saves the column view of V (beta requires grad when the
matrix-vector product does), and the next step's write bumps V's version. With a matrix-vector product whose output
requires grad (a symmetric matrix that requires grad), backward of the eigenvalues raises from the third step on;
the write on a fresh copy of V (`V = V.clone(); V[:, i] = v`) runs. Real by this file's convention: the library's
own `model_eigenvalues` hands a Hessian-vector product taken with create_graph=False (no grad). `lanczos` is compiled
alone from the shipped file."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("torch_secorder/analysis/eigensolvers.py")
assert linecache.getline(PATH, 115).strip() == "V[:, i] = v"


def run(shipped):
    replace = {} if shipped else {115: "V = V.clone(); V[:, i] = v"}
    ns = compile_alone(PATH, {"lanczos"}, {"torch": torch, "Callable": None, "Optional": None, "Tuple": None},
                       replace=replace)

    def go():
        torch.manual_seed(0)
        m = torch.randn(6, 6, requires_grad=True)
        a = m + m.T
        vals, vecs = ns["lanczos"](lambda v: a @ v, 6, num_iterations=4, num_vectors=2, device=torch.device("cpu"))
        vals.sum().backward()
        assert m.grad is not None
    return go


attempt("torch_secorder/analysis/eigensolvers.py:115:IPF104", "path", "lanczos with a symmetric matrix that requires "
        "grad, 4 iterations: the basis write spoils the column view `beta * V[:, i - 1]` saved, backward of the "
        "eigenvalues raises", run(True))
attempt("torch_secorder/analysis/eigensolvers.py:115:IPF104", "control", "the write on a fresh copy of V: runs",
        run(False))
