"""Stop 58 (prec58b): out-call-aborts-forward (buctoolkit minimize/QN.py:213, fresh55_probes.py:146; torchvine
tll_fit.py:124/:125/:138/:144 through ``_cef`` -> ``_win_smoother``, fresh57_probes.py:62/:64).

A torch function called with ``out=`` refuses, in the forward, an argument that requires grad ("functions with
out=... arguments don't support automatic differentiation"). A save counts only where the saving op's result
requires grad; where every path from that op on runs such a call on a tensor computed from the op's result
(through differentiable steps, grad mode unchanged, no backward, stash or ``try`` on the way), the program stops in
the forward before any backward reads the save. Each false-group program below shows it: with an input that
requires grad it stops at the ``out=`` call (never at backward), without one nothing is saved; the marked writes
must not be proven (possible, with the reason). Look-alikes where some path skips the call, the call's argument
is not computed from the op's result, or the result escapes first raise the in-place error and stay proven.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import marked, proven_lines, process_in_project, raises_inplace  # noqa: E402
from tests.programs import raises_proven as _real  # noqa: E402

_OUT_REFUSED = "don't support automatic differentiation"


def _aborts(source: str) -> None:
    """``main`` stops at an ``out=`` call for the grad inputs (never reaching backward), and no marked line is
    proven (each is possible, naming the ``out=`` call)."""
    assert marked(source)
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    with pytest.raises(RuntimeError, match=_OUT_REFUSED):
        space["main"]()
    space["plain"]()  # without grad: nothing is saved, and it runs
    assert not marked(source) & proven_lines(source)
    result = process_in_project(source, Settings(select=("IPF",)))
    for line in marked(source):
        found = [f for f in result.findings if f.span.line == line]
        assert found and all("out=" in f.message for f in found), (line, [f.message for f in found])


# ---------------------------------------------------------------- the QN form: the out= call in the same function
QN = '''\
import torch


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    torch.addmm(h, y.unsqueeze(1), d.unsqueeze(0) / sy, out=h)


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(4, 4))


def plain():
    update(torch.randn(4), torch.randn(4), torch.zeros(4, 4))
'''

# the torchvine form: a helper of the file runs `torch.cumsum(..., out=...)` on its parameter on every path
ACE = '''\
import torch


def _smooth(x):
    csum = torch.empty(x.numel() + 1, dtype=x.dtype)
    csum[0] = 0.0
    torch.cumsum(x, dim=0, out=csum[1:])
    return csum[1:] - csum[:-1]


def ace(data, w):
    phi = torch.stack([data[:, 0].argsort().to(data.dtype), data[:, 1].argsort().to(data.dtype)], dim=1)
    phi = phi - 1.0
    phi[:, 0] = phi[:, 0] * w  # MARK
    for _ in range(3):
        phi[:, 1] = _smooth(phi[:, 0] * w)  # MARK
    return phi


def main():
    w = torch.rand(5, requires_grad=True)
    ace(torch.rand(5, 2), w * 1).sum().backward()


def plain():
    ace(torch.rand(5, 2), torch.rand(5))
'''

# two helpers deep, the operand padded and flattened on the way (`_cef` -> `_win_smoother`, no early return)
ACE_DEEP = '''\
import torch
import torch.nn.functional as F


def _win(x, wl: int):
    n = int(x.numel())
    xp = F.pad(x.reshape(1, 1, n), (wl, wl), mode="replicate").reshape(n + 2 * wl)
    csum = torch.empty(n + 2 * wl + 1, dtype=x.dtype)
    csum[0] = 0.0
    torch.cumsum(xp, dim=0, out=csum[1:])
    return (csum[2 * wl + 1:] - csum[:-(2 * wl + 1)]) / float(2 * wl + 1)


def _cef(x, order, wl: int):
    xs = x[order]
    ys = _win(xs, wl)
    return ys[order]


def ace(data, w):
    order = data[:, 0].argsort()
    phi = data.argsort(dim=0).to(data.dtype) - 1.0
    phi[:, 0] = phi[:, 0] * w  # MARK
    for _ in range(2):
        phi_1 = _cef(phi[:, 0] * w, order, 1)
        s1 = torch.sqrt((phi_1 * phi_1).sum())
        phi[:, 1] = phi_1 / s1  # MARK
    return phi


def main():
    w = torch.rand(6, requires_grad=True)
    ace(torch.rand(6, 2), w * 1).sum().backward()


def plain():
    ace(torch.rand(6, 2), torch.rand(6))
'''

# the call after an `if` whose arms rebind nothing it reads, and a loop turning at least once
BRANCHED = '''\
import torch


def step(g, p, flag: bool):
    g = g * 1.0
    gg = (g * p).sum()
    if flag:
        g.mul_(0.5)  # MARK
    else:
        g.add_(1.0)  # MARK
    buf = torch.empty(3)
    torch.mul(p, gg, out=buf)
    return buf


def main():
    p = torch.randn(3, requires_grad=True)
    step(torch.randn(3), p * 1, True).sum().backward()


def plain():
    step(torch.randn(3), torch.randn(3), False)
'''


@pytest.mark.parametrize("source", [QN, ACE, ACE_DEEP, BRANCHED], ids=["qn", "ace", "ace-deep", "branched"])
def test_out_call_aborts_forward_is_not_proven(source):
    _aborts(source)


# ---------------------------------------------------------------- look-alikes that raise and stay proven
LOOKS = {
    # the out= call in one arm only: the other path returns to a backward
    "one-arm": '''\
import torch


def update(d, y, h, flag: bool):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    if flag:
        torch.addmm(h, y.unsqueeze(1), d.unsqueeze(0) / sy, out=h)
    return sy


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(4, 4), False).backward()
''',
    # its argument is not computed from the saving op's result
    "other-operand": '''\
import torch


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    torch.cumsum(h[0].detach(), 0, out=h[1])
    return sy


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(2, 4)).backward()
''',
    # the result detached before the call
    "detached": '''\
import torch


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    torch.mul(h[0], sy.detach(), out=h[1])
    return sy


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(2, 4)).backward()
''',
    # the call under no_grad: it refuses nothing
    "no-grad": '''\
import torch


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    with torch.no_grad():
        torch.mul(h[0], sy, out=h[1])
    return sy


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(2, 4)).backward()
''',
    # a try catches the refusal, and the result goes on to a backward
    "try": '''\
import torch


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    try:
        torch.mul(h[0], sy, out=h[1])
    except RuntimeError:
        pass
    return sy


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(2, 4)).backward()
''',
    # a return before the call on some path
    "returns-first": '''\
import torch


def update(d, y, h, early: bool):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    if early:
        return sy
    torch.mul(h[0], sy, out=h[1])
    return sy


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(2, 4), True).backward()
''',
    # a loop that may not turn holds the call
    "loop-may-not-turn": '''\
import torch


def update(d, y, h, n: int):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    for _ in range(n):
        torch.mul(h[0], sy, out=h[1])
    return sy


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(2, 4), 0).backward()
''',
    # the helper skips the call on a path (torchvine's `if wl <= 0: return x`)
    "helper-early-return": '''\
import torch


def _smooth(x, wl: int):
    if wl <= 0:
        return x
    csum = torch.empty(x.numel() + 1, dtype=x.dtype)
    csum[0] = 0.0
    torch.cumsum(x, dim=0, out=csum[1:])
    return csum[1:] - csum[:-1]


def ace(data, w, wl: int):
    phi = data.argsort(dim=0).to(data.dtype) - 1.0
    phi[:, 0] = phi[:, 0] * w  # MARK
    for _ in range(3):
        phi[:, 1] = _smooth(phi[:, 0] * w, wl)  # MARK
    return phi


def main():
    w = torch.rand(5, requires_grad=True)
    ace(torch.rand(5, 2), w * 1, 0).sum().backward()
''',
    # the result is stashed before the call: the caller catches the refusal and backpropagates the stash
    "stashed": '''\
import torch

STORE = {}


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    STORE["sy"] = sy
    y.add_(0.1 * d)  # MARK
    torch.mul(h[0], sy, out=h[1])


def main():
    d = torch.randn(4, requires_grad=True)
    try:
        update(d * 1, torch.randn(4), torch.zeros(2, 4))
    except RuntimeError:
        pass
    STORE["sy"].backward()
''',
    # ... or appended to a list of the module
    "appended": '''\
import torch

KEPT = []


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    KEPT.append(sy * 2)
    y.add_(0.1 * d)  # MARK
    torch.mul(h[0], sy, out=h[1])


def main():
    d = torch.randn(4, requires_grad=True)
    try:
        update(d * 1, torch.randn(4), torch.zeros(2, 4))
    except RuntimeError:
        pass
    KEPT[0].backward()
''',
    # a torch call outside the namespaces of ops runs a function of the file that stashes the result
    "checkpoint": '''\
import torch
import torch.utils.checkpoint

KEPT = []


def keep(t):
    KEPT.append(t)
    return t * 1


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    torch.utils.checkpoint.checkpoint(keep, sy, use_reentrant=False)
    y.add_(0.1 * d)  # MARK
    torch.mul(h[0], sy, out=h[1])


def main():
    d = torch.randn(4, requires_grad=True)
    try:
        update(d * 1, torch.randn(4), torch.zeros(2, 4))
    except RuntimeError:
        pass
    KEPT[0].backward()
''',
    # a walrus rebinds the name to a detached tensor before the call
    "walrus": '''\
import torch


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    kept = sy * 1.0
    y.add_(0.1 * d)  # MARK
    print((sy := sy.detach()))
    torch.mul(h[0], sy, out=h[1])
    return kept


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(2, 4)).backward()
''',
    # an out= form that does not refuse: `tensordot` decomposes into differentiable ops
    "tensordot": '''\
import torch


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    torch.tensordot(h, sy * h, dims=1, out=h)
    return sy


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(4, 4)).backward()
''',
    # a backward between the write and the call
    "backward-first": '''\
import torch


def update(d, y, h):
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)  # MARK
    sy.backward(retain_graph=True)
    torch.mul(h[0], sy, out=h[1])


def main():
    d = torch.randn(4, requires_grad=True)
    update(d * 1, torch.randn(4), torch.zeros(2, 4))
''',
    # the saved tensor written into the caller's tensor before the call: the caller catches and backpropagates it
    "into-the-caller": '''\
import torch


def update(d, y, h, keep):
    y = y - 0.0
    sy = (d * y).sum()
    keep.add_(sy)
    y.add_(0.1 * d)  # MARK
    torch.mul(h[0], sy, out=h[1])


def main():
    d = torch.randn(4, requires_grad=True)
    keep = torch.zeros(())
    try:
        update(d * 1, torch.randn(4), torch.zeros(2, 4), keep)
    except RuntimeError:
        pass
    keep.backward()
''',
}


@pytest.mark.parametrize("name", sorted(LOOKS))
def test_look_alikes_stay_proven(name):
    _real(LOOKS[name])


def test_the_false_programs_never_reach_backward_with_the_out_call_out_of_place():
    """The controls of the false group: the same programs with the ``out=`` call made out of place raise the
    in-place error at backward (so the proof was right but for the ``out=`` call)."""
    qn = QN.replace("torch.addmm(h, y.unsqueeze(1), d.unsqueeze(0) / sy, out=h)",
                    "return torch.addmm(h, y.unsqueeze(1), d.unsqueeze(0) / sy)").replace(
        "update(d * 1, torch.randn(4), torch.zeros(4, 4))", "update(d * 1, torch.randn(4), torch.zeros(4, 4)).sum().backward()")
    ace = ACE.replace("torch.cumsum(x, dim=0, out=csum[1:])", "csum = torch.cat([csum[:1], torch.cumsum(x, dim=0)])")
    for source in (qn, ace):
        assert raises_inplace(source)
        assert marked(source) & proven_lines(source)


# ---------------------------------------------------------------- the measured fact: which out= forms refuse
def g(*s):
    return torch.randn(*s, requires_grad=True)


def p(*s):
    return torch.randn(*s)


E = torch.empty
# each torch function of out_abort.REFUSING_OUT, with only the last tensor argument requiring grad (addmm0,
# clamp_t: another argument)
CALLS = {
 "addmm": lambda: torch.addmm(p(3, 3), p(3, 3), g(3, 3), out=E(3, 3)),
 "addmm0": lambda: torch.addmm(g(3, 3), p(3, 3), p(3, 3), out=E(3, 3)),
 "baddbmm": lambda: torch.baddbmm(p(1, 3, 3), p(1, 3, 3), g(1, 3, 3), out=E(1, 3, 3)),
 "addmv": lambda: torch.addmv(p(3), p(3, 3), g(3), out=E(3)),
 "addr": lambda: torch.addr(p(3, 3), p(3), g(3), out=E(3, 3)),
 "addcmul": lambda: torch.addcmul(p(3), p(3), g(3), out=E(3)),
 "addcdiv": lambda: torch.addcdiv(p(3), p(3), g(3), out=E(3)),
 "mm": lambda: torch.mm(p(3, 3), g(3, 3), out=E(3, 3)),
 "bmm": lambda: torch.bmm(p(1, 3, 3), g(1, 3, 3), out=E(1, 3, 3)),
 "mv": lambda: torch.mv(p(3, 3), g(3), out=E(3)),
 "matmul": lambda: torch.matmul(p(3, 3), g(3, 3), out=E(3, 3)),
 "dot": lambda: torch.dot(p(3), g(3), out=E(())),
 "outer": lambda: torch.outer(p(3), g(3), out=E(3, 3)),
 "cumsum": lambda: torch.cumsum(g(3), 0, out=E(3)),
 "cumprod": lambda: torch.cumprod(g(3), 0, out=E(3)),
 "mul": lambda: torch.mul(p(3), g(3), out=E(3)),
 "add": lambda: torch.add(p(3), g(3), out=E(3)),
 "sub": lambda: torch.sub(p(3), g(3), out=E(3)),
 "div": lambda: torch.div(p(3), g(3), out=E(3)),
 "where": lambda: torch.where(p(3) > 0, p(3), g(3), out=E(3)),
 "clamp": lambda: torch.clamp(g(3), 0, 1, out=E(3)),
 "clamp_t": lambda: torch.clamp(p(3), min=g(3), out=E(3)),
 "sum": lambda: torch.sum(g(3, 3), 0, out=E(3)),
 "mean": lambda: torch.mean(g(3, 3), 0, out=E(3)),
 "prod": lambda: torch.prod(g(3, 3), 0, out=E(3)),
 "amax": lambda: torch.amax(g(3, 3), 0, out=E(3)),
 "std": lambda: torch.std(g(3, 3), 0, out=E(3)),
 "norm": lambda: torch.norm(g(3, 3), dim=0, out=E(3)),
 "logsumexp": lambda: torch.logsumexp(g(3, 3), 0, out=E(3)),
 "cat": lambda: torch.cat([p(3), g(3)], out=E(6)),
 "stack": lambda: torch.stack([p(3), g(3)], out=E(2, 3)),
 "hstack": lambda: torch.hstack([p(3), g(3)], out=E(6)),
 "vstack": lambda: torch.vstack([p(3), g(3)], out=E(2, 3)),
 "exp": lambda: torch.exp(g(3), out=E(3)),
 "log": lambda: torch.log(g(3), out=E(3)),
 "sqrt": lambda: torch.sqrt(g(3), out=E(3)),
 "pow": lambda: torch.pow(p(3), g(3), out=E(3)),
 "sigmoid": lambda: torch.sigmoid(g(3), out=E(3)),
 "tanh": lambda: torch.tanh(g(3), out=E(3)),
 "square": lambda: torch.square(g(3), out=E(3)),
 "abs": lambda: torch.abs(g(3), out=E(3)),
 "neg": lambda: torch.neg(g(3), out=E(3)),
 "index_select": lambda: torch.index_select(g(3), 0, torch.tensor([0, 1]), out=E(2)),
 "gather": lambda: torch.gather(g(3), 0, torch.tensor([0, 1]), out=E(2)),
 "lerp": lambda: torch.lerp(p(3), g(3), 0.5, out=E(3)),
 "kron": lambda: torch.kron(p(2, 2), g(2, 2), out=E(4, 4)),
 "diff": lambda: torch.diff(g(3), out=E(2)),
 "maximum": lambda: torch.maximum(p(3), g(3), out=E(3)),
 "minimum": lambda: torch.minimum(p(3), g(3), out=E(3)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_each_refusing_out_form_refuses_a_tensor_that_requires_grad(name):
    with pytest.raises(RuntimeError, match=_OUT_REFUSED):
        CALLS[name]()


def test_the_refusing_table_is_the_measured_one():
    from codemod.analysis.out_abort import REFUSING_OUT
    assert REFUSING_OUT == {"torch." + n for n in CALLS if n not in ("addmm0", "clamp_t")}


@pytest.mark.parametrize("call", [
    "torch.tensordot(p(3, 3), g(3, 3), dims=1, out=E(3, 3))", "torch.inner(p(3), g(3), out=E(()))",
    "torch.linalg.norm(g(3), out=E(()))", "torch.softmax(g(3), 0, out=E(3))", "torch.log_softmax(g(3), 0, out=E(3))"])
def test_some_out_forms_do_not_refuse(call):
    assert eval(call).requires_grad
