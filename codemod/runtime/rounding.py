"""The rounding probes: the reference run again with every CPU float operation rounded upward,
then downward.

Why: a verdict may accept a difference only where rounding explains it *for that entry*. A
rewrite that sums in another order moves each entry by a few ulps of the terms it was summed
from, and an entry near zero (a cancellation, a weight after optimizer steps) may carry noise
far above its own magnitude; an entry computed on its own (a scalar stacked beside a large
sum) carries none. Which is which cannot be told from the two results: the probe measures it.
Rounding upward or downward instead of to nearest changes nothing but the rounding of each
operation (``fesetround`` sets the SSE/AVX control register that vectorized kernels use, NEON's
FPCR on ARM); one intra-op thread keeps every operation on the thread whose mode was set (and
splits reductions otherwise, which is rounding too). The larger of ``|reference - probe|`` over
the two directions, per entry, is the size of that entry's rounding noise
(:mod:`codemod.runtime.compare` uses it). Both directions, because one alone agrees with
rounding to nearest wherever nearest went its way: an entry quantized by a large neighbour
(``(big + s) - big``) would show no noise in about half its entries; the two bracket it.

It does not reach CUDA kernels: on a GPU the probe measures the CPU part of a run only.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import platform
from typing import Iterator, Optional

import torch

DIRECTIONS = ("upward", "downward")
_X86 = {"upward": 0x800, "downward": 0x400}
_ARM = {"upward": 0x400000, "downward": 0x800000}
# <fenv.h>'s FE_UPWARD and FE_DOWNWARD per machine (glibc, musl and macOS agree on each).
_FE_MODES = {"x86_64": _X86, "amd64": _X86, "i386": _X86, "i686": _X86, "aarch64": _ARM, "arm64": _ARM}


def _libm() -> Optional[ctypes.CDLL]:
    name = ctypes.util.find_library("m")
    try:
        return ctypes.CDLL(name) if name else ctypes.CDLL(None)
    except OSError:
        return None


def probe_available() -> bool:
    """Whether this machine can round upward and downward (a known FPU, a C library that sets it)."""
    libm = _libm()
    return libm is not None and hasattr(libm, "fesetround") and platform.machine().lower() in _FE_MODES


@contextlib.contextmanager
def rounding(direction: str) -> Iterator[None]:
    """Every float operation on this thread rounded ``direction`` (``upward``: toward +inf,
    ``downward``: toward -inf), on one intra-op thread; the mode and the thread count restored
    afterwards. Raises RuntimeError where it cannot."""
    libm = _libm()
    mode = _FE_MODES.get(platform.machine().lower(), {}).get(direction)
    if libm is None or mode is None or not hasattr(libm, "fesetround"):
        raise RuntimeError(f"rounding {direction} is not available on this machine")
    threads = torch.get_num_threads()
    previous = libm.fegetround()
    torch.set_num_threads(1)
    if libm.fesetround(mode) != 0:
        torch.set_num_threads(threads)
        raise RuntimeError(f"fesetround failed for rounding {direction}")
    try:
        yield
    finally:
        libm.fesetround(previous)
        torch.set_num_threads(threads)
