# 715helpers_k2_mutual_information.py with k2-fsa/k2 PR #1106 applied ("Removed inplace grad multiplication"):
# the backward multiplies out of place, `px_grad = px_grad * ans_grad` (and py_grad). Stand-in: the `_k2` C++/CUDA extension is not
# available here, so `_k2.mutual_information_forward/backward` are small pure-PyTorch versions of the same
# recursion (non-"modified" case, no boundary): forward fills p and returns p[:, S, T]; backward returns the
# gradients of sum_b ans_grad[b] * ans[b] with respect to px and py (what the kernel computes).
import torch
from torch import Tensor
from typing import Tuple, Optional, Sequence, Union, List


class _k2:
    # stand-in for the compiled extension module
    @staticmethod
    def mutual_information_forward(px, py, boundary, p):
        B, S, T1 = px.shape
        T = py.shape[-1]
        neg_inf = torch.tensor(float("-inf"), dtype=px.dtype)
        p.fill_(float("-inf"))
        p[:, 0, 0] = 0.0
        for s in range(S + 1):
            for t in range(T + 1):
                if s == 0 and t == 0:
                    continue
                a = p[:, s - 1, t] + px[:, s - 1, t] if s > 0 else neg_inf.expand(B)
                b = p[:, s, t - 1] + py[:, s, t - 1] if t > 0 else neg_inf.expand(B)
                p[:, s, t] = torch.logaddexp(a, b)
        return p[:, S, T].clone()

    @staticmethod
    def mutual_information_backward(px, py, boundary, p, ans_grad):
        with torch.enable_grad():
            px_ = px.detach().requires_grad_(True)
            py_ = py.detach().requires_grad_(True)
            B, S, T1 = px.shape
            T = py.shape[-1]
            rows = [[None] * (T + 1) for _ in range(S + 1)]
            rows[0][0] = torch.zeros(B, dtype=px.dtype)
            neg_inf = torch.full((B,), float("-inf"), dtype=px.dtype)
            for s in range(S + 1):
                for t in range(T + 1):
                    if s == 0 and t == 0:
                        continue
                    a = rows[s - 1][t] + px_[:, s - 1, t] if s > 0 else neg_inf
                    b = rows[s][t - 1] + py_[:, s, t - 1] if t > 0 else neg_inf
                    rows[s][t] = torch.logaddexp(a, b)
            px_grad, py_grad = torch.autograd.grad((rows[S][T] * ans_grad).sum(), [px_, py_])
        return px_grad, py_grad


class MutualInformationRecursionFunction(torch.autograd.Function):
    """A recursion that is useful in computing mutual information between two
    sequences of real vectors, but may be useful more generally in
    sequence-to-sequence tasks where monotonic alignment between pairs of
    sequences is desired.
    """

    @staticmethod
    def forward(
        ctx,
        px: torch.Tensor,
        py: torch.Tensor,
        pxy_grads: List[Optional[torch.Tensor]],
        boundary: Optional[torch.Tensor] = None,
        return_grad: bool = False,
    ) -> torch.Tensor:
        (B, S, T1) = px.shape
        T = py.shape[-1]
        assert T1 in [T, T + 1], (T1, T)
        assert py.shape == (B, S + 1, T), (py.shape, S, T)
        if boundary is not None:
            assert boundary.shape == (B, 4), (boundary.shape, B)

        # p is a tensor of shape (B, S + 1, T + 1) were p[s][t] is the
        # the mutual information of the pair of subsequences of x and y that
        # are of length s and t respectively.  p[0][0] will be 0.0 and p[S][T]
        # is the mutual information of the entire pair of sequences,
        # i.e. of lengths S and T respectively.

        p = torch.empty(B, S + 1, T + 1, device=px.device, dtype=px.dtype)

        ans = _k2.mutual_information_forward(px, py, boundary, p)

        px_grad, py_grad = None, None
        if return_grad or px.requires_grad or py.requires_grad:
            ans_grad = torch.ones(B, device=px.device, dtype=px.dtype)
            (px_grad, py_grad) = _k2.mutual_information_backward(
                px, py, boundary, p, ans_grad)
            ctx.save_for_backward(px_grad, py_grad)
        assert len(pxy_grads) == 2, len(pxy_grads)
        pxy_grads[0] = px_grad
        pxy_grads[1] = py_grad

        return ans

    @staticmethod
    def backward(
        ctx, ans_grad: Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor, None, None, None]:
        (px_grad, py_grad) = ctx.saved_tensors
        (B,) = ans_grad.shape
        ans_grad = ans_grad.reshape(B, 1, 1)  # (B, 1, 1)
        px_grad = px_grad * ans_grad
        py_grad = py_grad * ans_grad
        return (px_grad, py_grad, None, None, None)


def mutual_information_recursion(
    px: Tensor,
    py: Tensor,
    boundary: Optional[Tensor] = None,
    return_grad: bool = False,
) -> Union[Tuple[Tensor, Tuple[Tensor, Tensor]], Tensor]:
    """A recursion that is useful in computing mutual information between two
    sequences of real vectors (see MutualInformationRecursionFunction)."""
    assert px.ndim == 3, px.shape
    B, S, T1 = px.shape
    T = py.shape[-1]
    assert px.shape[-1] in [T, T + 1], (px.shape, T)  # if T, then "modified".
    assert py.shape == (B, S + 1, T), (py.shape, B, S, T)
    assert px.dtype == py.dtype, (px.dtype, py.dtype)
    if boundary is not None:
        assert boundary.dtype == torch.int64, boundary.dtype
        assert boundary.shape == (B, 4), (boundary.shape, B)
        for s_begin, t_begin, s_end, t_end in boundary.tolist():
            assert 0 <= s_begin <= s_end <= S, (s_begin, s_end, S)
            assert 0 <= t_begin <= t_end <= T, (t_begin, t_end, T)

    # The following statements are for efficiency
    px, py = px.contiguous(), py.contiguous()

    pxy_grads = [None, None]
    scores = MutualInformationRecursionFunction.apply(px, py, pxy_grads,
                                                      boundary, return_grad)
    px_grad, py_grad = pxy_grads
    return (scores, (px_grad, py_grad)) if return_grad else scores
