"""What a program prints is part of what it does.

A rewrite can keep every tensor the harness compares and still change the program: a running
statistic that is only logged, a buffer that is only shown, an in-place update whose only reader
is a ``print``. So the rewritten run's standard output is compared with the reference run's, line
by line. Numbers are compared to the precision they were printed with (a last digit that rounds
the other way is not a difference); autograd's own annotations (``grad_fn=<...>``,
``requires_grad=True``) and object addresses are not part of the comparison, since a correct
rewrite changes them.
"""

from __future__ import annotations

import math
import re
from typing import List, Optional, Tuple

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b")
_NOT_COMPARED = re.compile(r",?\s*(?:grad_fn=<\w+>|requires_grad=True)|0x[0-9a-fA-F]+")


def printed_difference(reference: str, rewritten: str, rtol: float, atol: float) -> Optional[str]:
    """The first way the rewritten run's printed output differs from the reference's, in words;
    None where every line agrees."""
    ref, new = reference.splitlines(), rewritten.splitlines()
    if len(ref) != len(new):
        return f"the rewritten run printed {len(new)} line(s), the reference {len(ref)}"
    for number, (a, b) in enumerate(zip(ref, new), 1):
        if not _same_line(a, b, rtol, atol):
            return f"printed line {number} differs: {_short(b)!r}, the reference printed {_short(a)!r}"
    return None


def printed_lines(text: str) -> int:
    return len(text.splitlines())


def _same_line(a: str, b: str, rtol: float, atol: float) -> bool:
    if a == b:
        return True
    (text_a, nums_a), (text_b, nums_b) = _parts(a), _parts(b)
    return text_a == text_b and len(nums_a) == len(nums_b) and all(
        _close(x, y, rtol, atol) for x, y in zip(nums_a, nums_b))


def _parts(line: str) -> Tuple[List[str], List[str]]:
    line = _NOT_COMPARED.sub("", line)
    return _NUMBER.split(line), _NUMBER.findall(line)


def _close(a: str, b: str, rtol: float, atol: float) -> bool:
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    shown = min(_last_digit(a), _last_digit(b))
    return abs(x - y) <= atol + rtol * max(abs(x), abs(y)) + shown * (1 + 1e-9)


def _last_digit(text: str) -> float:
    """What one unit of the last printed digit is worth where the number was rounded to a
    fixed number of decimals (``0.0012`` -> 1e-4, ``1.5e-03`` -> 1e-4); 0 for one printed
    without decimals (``3``, torch's ``1.``), which is exact. Of two numbers, the finer unit
    counts (Python prints ``0.0`` for an exact zero)."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals) if decimals else 0.0


def _short(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
