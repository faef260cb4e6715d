"""A check shared by the hazard tests: does running ``fn`` raise the in-place error?"""

from __future__ import annotations

from typing import Callable


def raises_at_backward(fn: Callable[[], object]) -> bool:
    """True where ``fn`` dies with "modified by an inplace operation" (the proof a hazard is real)."""
    try:
        fn()
    except RuntimeError as error:
        return "modified by an inplace operation" in str(error)
    return False
