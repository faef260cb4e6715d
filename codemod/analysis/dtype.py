"""dtype: would the out-of-place form of an op compute in another dtype than the in-place one?

``x += y`` keeps ``x``'s dtype; ``x = x + y`` takes the promoted dtype of both operands (half +=
float32 stays half, half + float32 is float32). Python numbers never promote a tensor's dtype
category they already match, so only non-scalar operands count.
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional

from codemod.analysis.kinds import Kind
from codemod.analysis.syntax import target_key
from codemod.analysis.tensor_kind import TensorKinds


def may_promote(kinds: TensorKinds, key: Optional[str], operands: Iterable[ast.expr],
                assume_same_dtype: bool = False) -> bool:
    """Whether ``x = x op y`` could take another dtype than ``x op= y`` keeps (``key``: x's)."""
    if assume_same_dtype:
        return False
    for operand in operands:
        if key is not None and target_key(operand) == key:
            continue
        if kinds.kind(operand) is not Kind.SCALAR:
            return True
    return False
