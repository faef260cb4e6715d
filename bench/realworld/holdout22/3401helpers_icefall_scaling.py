# Library module for case 3401: k2-fsa/icefall egs/librispeech/ASR/pruned_transducer_stateless7/scaling.py at the
# parent of 1f7741d, reduced: ScaledLinear, _no_op, Identity, SoftmaxFunction / softmax, WithLoss / with_loss and
# penalize_abs_values_gt are the source's. Stand-in: Whiten (the source's returns its input unchanged in the forward
# pass and only reshapes gradients in backward, drawing random numbers to decide when; here it is the no-op alone and
# draws nothing, so the one random draw of the attention's penalty branch is the program's only one).
import torch
from torch import Tensor, nn


def ScaledLinear(*args, initial_scale: float = 1.0, **kwargs) -> nn.Linear:
    ans = nn.Linear(*args, **kwargs)
    with torch.no_grad():
        ans.weight[:] *= initial_scale
        if ans.bias is not None:
            torch.nn.init.uniform_(ans.bias, -0.1 * initial_scale, 0.1 * initial_scale)
    return ans


def _no_op(x: Tensor) -> Tensor:
    if torch.jit.is_scripting():
        return x
    else:
        # a no-op function that will have a node in the autograd graph,
        # to avoid certain bugs relating to backward hooks
        return x.chunk(1, dim=-1)[0]


class Identity(torch.nn.Module):
    def __init__(self):
        super(Identity, self).__init__()

    def forward(self, x):
        return _no_op(x)


class Whiten(nn.Module):
    """Stand-in: the forward pass of the source's Whiten (returns x unmodified through _no_op)."""

    def __init__(self, num_groups: int, whitening_limit: float, prob, grad_scale: float):
        super().__init__()
        self.num_groups = num_groups
        self.whitening_limit = whitening_limit
        self.prob = prob
        self.grad_scale = grad_scale

    def forward(self, x: Tensor) -> Tensor:
        return _no_op(x)


class SoftmaxFunction(torch.autograd.Function):
    """
    Tries to handle half-precision derivatives in a randomized way that should
    be more accurate for training than the default behavior.
    """

    @staticmethod
    def forward(ctx, x: Tensor, dim: int):
        ans = x.softmax(dim=dim)
        if torch.is_autocast_enabled():
            ans = ans.to(torch.float16)
        ctx.save_for_backward(ans)
        ctx.x_dtype = x.dtype
        ctx.dim = dim
        return ans

    @staticmethod
    def backward(ctx, ans_grad: Tensor):
        (ans,) = ctx.saved_tensors
        ans_grad = ans_grad.to(torch.float32)
        ans = ans.to(torch.float32)
        x_grad = ans_grad * ans
        x_grad = x_grad - ans * x_grad.sum(dim=ctx.dim, keepdim=True)
        return x_grad, None


def softmax(x: Tensor, dim: int):
    if torch.jit.is_scripting():
        return x.softmax(dim)

    return SoftmaxFunction.apply(x, dim)


class WithLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, y: Tensor):
        ctx.y_shape = y.shape
        return x

    @staticmethod
    def backward(ctx, ans_grad: Tensor):
        return ans_grad, torch.ones(
            ctx.y_shape, dtype=ans_grad.dtype, device=ans_grad.device
        )


def with_loss(x, y):
    if torch.jit.is_scripting():
        return x
    # returns x but adds y.sum() to the loss function.
    return WithLoss.apply(x, y)


def penalize_abs_values_gt(x: Tensor, limit: float, penalty: float) -> Tensor:
    """
    Returns x unmodified, but in backprop will put a penalty for the excess of
    the absolute values of elements of x over the limit "limit".
    """
    x_sign = x.sign()
    over_limit = (x.abs() - limit) > 0
    aux_loss = penalty * ((x_sign * over_limit).to(torch.int8) * x)
    # note: we don't do sum() here on aux)_loss, but it's as if we had done
    # sum() due to how with_loss() works.
    x = with_loss(x, aux_loss)
    # you must use x for something, or this will be ineffective.
    return x
