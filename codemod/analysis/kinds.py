"""The kinds of value the analysis tells apart ("is this a tensor?") and how they combine."""

from __future__ import annotations

import enum
from typing import Iterable


class Kind(enum.Enum):
    TENSOR = "tensor"
    PARAMETER = "parameter"  # an nn.Parameter: a tensor that cannot be rebound to a plain one
    MODULE = "module"  # a torch.nn module instance known to return a tensor
    SCALAR = "scalar"  # a Python number or bool
    OTHER = "other"  # known not to be a tensor: str, containers, numpy, classes, None...
    UNKNOWN = "unknown"
    PENDING = "pending"  # internal: a recursive question still being answered


TENSORISH = (Kind.TENSOR, Kind.PARAMETER)
# The qualified names of ``nn.Parameter`` (its class and where it is defined).
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def join(kinds: Iterable[Kind]) -> Kind:
    seen = {k for k in kinds if k is not Kind.PENDING}
    if not seen:
        return Kind.PENDING
    if len(seen) == 1:
        return seen.pop()
    if seen <= {Kind.TENSOR, Kind.PARAMETER}:
        return Kind.TENSOR
    return Kind.UNKNOWN
