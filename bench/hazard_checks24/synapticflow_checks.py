"""synapticflow 0.0.7 (synapticflow/encoding/encoders.py:319 `RankOrderEncoder.__call__`): the proven finding of
`inplacefix check` (stop 54, fresh54b, end of stop). `times *= time / times.max()` writes the times that `max` (same
line) saved. But the next line is `times = torch.ceil(times).long()`: an integer tensor, which carries no grad, and
the encoder returns byte spikes built from it. Nothing the encoder hands back, and nothing it keeps, reaches the max's
node, so no backward can raise there: false (non-differentiable-sink, the `.long()` form). `RankOrderEncoder.__call__`
is compiled alone from the shipped file (stand-in self: time 10, dt 1, cpu). Context: stopped right after :319
handing the float times back, differentiating them raises."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src, then

PATH = src("synapticflow/encoding/encoders.py")
LINE = "times *= time / times.max()"
assert linecache.getline(PATH, 319).strip() == LINE
assert linecache.getline(PATH, 320).strip() == "times = torch.ceil(times).long()"


def run(stop=False, control=False):
    line = "times = times * (time / times.max())" if control else LINE
    ns = compile_alone(PATH, {"RankOrderEncoder.__call__"}, {"torch": torch, "Optional": None},
                       replace={319: then(line, "return times") if stop else line})

    def go():
        me = types.SimpleNamespace(time=10, dt=1.0, device="cpu")
        data = torch.rand(2, 3, requires_grad=True)
        out = ns["__call__"](me, data)
        if out.requires_grad:  # only the stopped runs hand back something differentiable
            out.sum().backward()
        elif stop:
            raise SystemExit("the stopped run must hand back the float times")
    return go


FID = "synapticflow/encoding/encoders.py:319:IPF101"
attempt(FID, "path", "RankOrderEncoder(10) on data that requires grad: runs; the byte spikes carry no grad, "
        "nothing to differentiate", run())
attempt(FID, "context", "stopped right after :319 (return times), differentiating times: raises", run(stop=True))
attempt(FID, "context", "the same with :319 out of place: runs", run(stop=True, control=True))
