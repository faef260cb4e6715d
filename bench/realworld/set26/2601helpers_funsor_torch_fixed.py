# FIXED copy (commit 4b6d26f3): `result = x.reciprocal().clamp(max=torch.finfo(x.dtype).max)`, out of place.
# Written anew at small size after pyro-ppl/funsor at the parent of commit 4b6d26f3 ("remove inplace op in
# reciprocal"): funsor/ops.py (Op: one callable per operation, implementations registered per argument type),
# funsor/torch.py (the torch.Tensor implementations and the Tensor funsor) and funsor/cnf.py (the normal-form rule
# `binary_divide`: `lhs / rhs` -> `lhs * Unary(ops.reciprocal, rhs)`).
# The culprit, as in funsor/torch.py: `_reciprocal` computes `result = x.reciprocal()` and then clamps it in place,
# `result.clamp_(max=torch.finfo(result.dtype).max)`; ReciprocalBackward0 saves its output (d(1/x) = -result**2),
# so any backward through a funsor division fails with "output 0 of ReciprocalBackward0 ... is at version 1".
# Stand-ins: multipledispatch's Dispatcher is a dict keyed by the first argument's type (walked along the MRO);
# the lazy terms (Binary, Unary) and the interpretation stack are reduced to the eager path of a Tensor funsor
# whose `/` goes through the normal-form rule and whose Unary is evaluated at once on `.data`; no named inputs.
import torch


class Op:
    def __init__(self, fn):
        self.__name__ = fn.__name__
        self.default = fn
        self.registry = {}

    def register(self, *types):
        def decorator(fn):
            self.registry[types[0]] = fn
            return fn
        return decorator

    def __call__(self, *args):
        for cls in type(args[0]).__mro__:
            if cls in self.registry:
                return self.registry[cls](*args)
        return self.default(*args)

    def __repr__(self):
        return self.__name__


@Op
def reciprocal(x):
    return 1.0 / x


@Op
def mul(x, y):
    return x * y


@reciprocal.register(torch.Tensor)
def _reciprocal(x):
    result = x.reciprocal().clamp(max=torch.finfo(x.dtype).max)
    return result


class Tensor:
    """A funsor wrapping a torch.Tensor (no named inputs here)."""

    def __init__(self, data):
        self.data = data

    def __mul__(self, other):
        other = other.data if isinstance(other, Tensor) else other
        return Tensor(mul(self.data, other))

    def __truediv__(self, other):
        return binary_divide(self, other)

    def reciprocal(self):
        return unary(reciprocal, self)


def unary(op, arg):
    # eager evaluation of Unary(op, Tensor): apply the op's tensor implementation to the data
    return Tensor(op(arg.data))


def binary_divide(lhs, rhs):
    # funsor/cnf.py, normalize.register(Binary, ops.DivOp, Funsor, Funsor)
    return lhs * unary(reciprocal, rhs)
