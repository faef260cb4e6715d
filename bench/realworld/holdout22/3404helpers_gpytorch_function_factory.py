# Library module for case 3404 (shared by the original and the reference): cornellius-gp/gpytorch
# gpytorch/utils/function_factory.py at the parent of de72a06 (January 2018), reduced to inv_matmul_factory and the
# default quadratic-form closure, with NonLazyVariable's matmul closure. Stand-ins: InvMatmul is ported from the
# legacy non-static autograd.Function API of 2018 (constructor arguments, self.save_for_backward) to the static
# ctx API, which is the only one torch 2.13 runs; LinearCG().solve is replaced by an exact solve
# (the operator materialised through its matmul closure and torch.linalg.solve; the source solves with
# conjugate gradients). What the Function saves is the source's: its
# inputs and its own result `res`.
import torch
from torch.autograd import Function


def _default_derivative_quadratic_form_factory(mat):
    def closure(left_vectors, right_vectors):
        if left_vectors.ndimension() == 1:
            left_factor = left_vectors.unsqueeze(0).contiguous()
            right_factor = right_vectors.unsqueeze(0).contiguous()
        else:
            left_factor = left_vectors.contiguous()
            right_factor = right_vectors.contiguous()
        left_factor = left_factor.unsqueeze(-1)
        right_factor = right_factor.unsqueeze(-2)
        res = (left_factor * right_factor).sum(dim=-3).squeeze_()
        return res,
    return closure


def _non_lazy_matmul_closure_factory(tensor):
    def closure(rhs_tensor):
        return torch.matmul(tensor, rhs_tensor)
    return closure


class LinearCG:
    """Stand-in: an exact solve in place of conjugate gradients."""

    def solve(self, matmul_closure, rhs):
        n = rhs.size(0)
        matrix = matmul_closure(torch.eye(n, dtype=rhs.dtype))  # the operator, materialised through its closure
        return torch.linalg.solve(matrix, rhs)


def inv_matmul_factory(matmul_closure_factory=_non_lazy_matmul_closure_factory,
                       derivative_quadratic_form_factory=_default_derivative_quadratic_form_factory):
    class InvMatmul(Function):
        @staticmethod
        def forward(ctx, *args):
            closure_args = args[:-1]
            rhs = args[-1]
            res = LinearCG().solve(matmul_closure_factory(*closure_args), rhs)
            ctx.save_for_backward(*(list(args) + [res]))
            return res

        @staticmethod
        def backward(ctx, grad_output):
            if derivative_quadratic_form_factory is None:
                raise NotImplementedError
            args = ctx.saved_tensors[:-2]
            closure_args = args
            res = ctx.saved_tensors[-1]

            arg_grads = [None] * len(args)
            rhs_grad = None

            # input_1 gradient
            if any(ctx.needs_input_grad[:-1]):
                lhs_matrix_grad = LinearCG().solve(matmul_closure_factory(*closure_args), grad_output)
                lhs_matrix_grad = lhs_matrix_grad.mul_(-1)
                if res.ndimension() == 1:
                    res = res.unsqueeze(1)
                if lhs_matrix_grad.ndimension() == 1:
                    lhs_matrix_grad = lhs_matrix_grad.unsqueeze(1)

                arg_grads = list(derivative_quadratic_form_factory(*args)(lhs_matrix_grad.t(), res.t()))

            # input_2 gradient
            if ctx.needs_input_grad[-1]:
                rhs_grad = LinearCG().solve(matmul_closure_factory(*closure_args), grad_output)

            return tuple(arg_grads + [rhs_grad])

    return InvMatmul


_inv_matmul_class = inv_matmul_factory()


def inv_matmul(mat1, rhs):
    """Computes a linear solve with several right hand sides: (mat1)^{-1} rhs."""
    return _inv_matmul_class.apply(mat1, rhs)
