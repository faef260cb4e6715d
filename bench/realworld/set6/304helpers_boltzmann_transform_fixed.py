# helper for case 304 (reference), PR #5842 applied: torch/distributions/transforms.py of PyTorch as of PR #5842 (March 2018), the
# BoltzmannTransform (later renamed SoftmaxTransform) and the transform_to registration that used it for the simplex;
# the rest of the module is today's torch.distributions (Transform base class, constraints).
import torch
from torch.distributions import constraints
from torch.distributions.transforms import Transform


class BoltzmannTransform(Transform):
    """
    Transform from unconstrained space to the simplex via `y = exp(x)` then
    normalizing.

    This is not bijective and cannot be used for HMC. However this acts mostly
    coordinate-wise (except for the final normalization), and thus is
    appropriate for coordinate-wise optimization algorithms.
    """
    domain = constraints.real_vector
    codomain = constraints.simplex
    event_dim = 1

    def __eq__(self, other):
        return isinstance(other, BoltzmannTransform)

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        probs = y
        return probs.log()


def transform_to_simplex(constraint):
    # stand-in for `@transform_to.register(constraints.simplex)` of that version
    return BoltzmannTransform()
