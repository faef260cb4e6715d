"""pykaira 0.2.1 (kaira/models/fec/decoders/belief_propagation_polar.py:152, :153 `update_right`, :226, :227
`decode_iterative`; kaira/models/fec/encoders/linear_block_code.py:218, :224 `compute_reduced_row_echelon_form`): the
proven findings of `inplacefix check` (stop 56, fresh56, end of stop): all six on the preview (main de3d78f), :218 and
:224 on the merged main f26f2d0. The functions are compiled alone from the
shipped files (the decoder's methods with a stand-in self built as `__init__` builds it: the polar index matrix of
encoders/polar_code.py, its rows flipped; `min_sum` and `sum_product` from fec/utils.py).

- belief_propagation_polar.py (4, false): `R[:, i + 1, mask[i]] = self.checknode(R[:, i, mask[i]], ...)` (:152,
  :153) and decode_iterative's `left[not_satisfied] = self.update_left(right[not_satisfied], ...)` (:226, :227). The
  check reads `R[:, i, mask[i]]` as a view of R that min_sum's `torch.abs` saves; but `mask = self.mask_dict` is an
  integer tensor and `mask[i]` one of its rows, so the read is an advanced-index copy, and the writes into R (or L)
  touch nothing saved. LLRs that require grad (a trainable decoder), two left/right sweeps of an N=8 polar code,
  backward of R and L: runs (grads reach the LLRs); decode_iterative, whose sweeps get index copies
  `right[not_satisfied]`, backward of its kept outputs: runs. False.
- linear_block_code.py:218, :224 (real by this file's convention): on a non-binary matrix, `A[pivot_row] =
  A[pivot_row] / pivot_val` and `A[i] = A[i] - factor * A[pivot_row]` write rows of A that the division and the
  product saved (views of A: the pivot row, pivot_val, factor). A matrix that requires grad, backward of the reduced
  form: raises. Each isolated by the other row writes (and the row swap) going through `A.data`; the control all of
  them so. The library reduces generator matrices built from numbers (no grad)."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

BP = src("kaira/models/fec/decoders/belief_propagation_polar.py")
PC = src("kaira/models/fec/encoders/polar_code.py")
UT = src("kaira/models/fec/utils.py")
LB = src("kaira/models/fec/encoders/linear_block_code.py")
for n in (152, 153):
    assert linecache.getline(BP, n).strip().startswith("R[:, i + 1, mask[i]"), n
assert linecache.getline(BP, 226).strip().startswith("left[not_satisfied] = self.update_left(")
assert linecache.getline(BP, 227).strip().startswith("right[not_satisfied] = self.update_right(")
ROWS = {209: "A[pivot_row], A[i] = A[i].clone(), A[pivot_row].clone()",
        218: "A[pivot_row] = A[pivot_row] / pivot_val",
        224: "A[i] = A[i] - factor * A[pivot_row]"}
for n, text in ROWS.items():
    assert linecache.getline(LB, n).strip() == text, n
DATA = {209: "A.data[pivot_row], A.data[i] = A[i].detach().clone(), A[pivot_row].detach().clone()",
        218: "A.data[pivot_row] = (A[pivot_row] / pivot_val).detach()",
        224: "A.data[i] = (A[i] - factor * A[pivot_row]).detach()"}


def decoder(regime="min_sum", iterative=False):
    util = compile_alone(UT, {"min_sum", "sum_product", "llr_to_bits"}, {"torch": torch})
    ns = compile_alone(BP, {f"BeliefPropagationPolarDecoder.{name}" for name in
                            ("update_right", "update_left", "checknode", "_initialize_graph", "decode_iterative")},
                       dict(util))
    index = compile_alone(PC, {"_index_matrix"}, {"torch": torch})

    def go():
        torch.manual_seed(0)
        n, m = 8, 3
        mask = index["_index_matrix"](n).T.int() - 1
        mask = mask[torch.flip(torch.arange(m), [0])]
        this = types.SimpleNamespace(m=m, code_length=n, mask_dict=mask, regime=regime, clip=1e6, device="cpu",
                                     frozen_zeros=True, frozen_ind=torch.tensor([0, 1, 2, 4]))
        this.checknode = lambda a, b: ns["checknode"](this, a, b)
        llr = torch.randn(2, n, requires_grad=True)
        if iterative:
            this.update_left = lambda r, l, p: ns["update_left"](this, r, l, p)
            this.update_right = lambda r, l, p: ns["update_right"](this, r, l, p)
            this._initialize_graph = lambda x: ns["_initialize_graph"](this, x)
            this.permutations = torch.arange(m).reshape(1, m)
            this.iteration_num, this.early_stop = 3, False
            ns["decode_iterative"](this, llr * 1.0)
            torch.cat(this.ans).sum().backward()
            assert llr.grad is not None and llr.grad.abs().sum() > 0
            return
        right, left = ns["_initialize_graph"](this, llr * 1.0)
        perm = torch.arange(m)
        for _ in range(2):
            left = ns["update_left"](this, right, left, perm)
            right = ns["update_right"](this, right, left, perm)
        (right.sum() + left.sum()).backward()
        assert llr.grad is not None and llr.grad.abs().sum() > 0
    return go


def echelon(shipped):
    ns = compile_alone(LB, {"compute_reduced_row_echelon_form"}, {"torch": torch},
                       replace={n: code for n, code in DATA.items() if n != shipped})

    def go():
        m = torch.tensor([[2.0, 1.0, 3.0], [0.0, 4.0, 1.0], [1.0, 1.0, 0.5]], requires_grad=True)
        out = ns["compute_reduced_row_echelon_form"](m * 1.0)
        (out * torch.arange(9.0).reshape(3, 3)).sum().backward()
        assert m.grad is not None
    return go


for n in (152, 153):
    FID = f"kaira/models/fec/decoders/belief_propagation_polar.py:{n}:IPF104"
    attempt(FID, "path", "N=8 polar BP decoder (min_sum), LLRs that require grad, two left/right sweeps, backward of "
            "R and L: runs (mask[i] is an integer row: the reads are index copies)", decoder())
for n in (226, 227):
    FID = f"kaira/models/fec/decoders/belief_propagation_polar.py:{n}:IPF104"
    attempt(FID, "path", "decode_iterative (min_sum, 3 iterations, no early stop) on LLRs that require grad, backward "
            "of the per-iteration outputs it keeps (self.ans): runs (update_left/right get index copies of left and "
            "right, and their reads are index copies too)", decoder(iterative=True))
for n in (218, 224):
    FID = f"kaira/models/fec/encoders/linear_block_code.py:{n}:IPF104"
    attempt(FID, "path", f"reduced row echelon form of a 3x3 non-binary matrix that requires grad, :{n} as shipped, "
            "the other row writes through A.data: raises", echelon(n))
    attempt(FID, "control", "all row writes through A.data: runs", echelon(None))
