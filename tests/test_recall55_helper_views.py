"""Issue 24, stop 55 (recall): two facts on the way to a proof.

1. A view a helper of the file makes, bound to a name (``d = diagonal(v)``, ``t = tview(e)``, the
   helper's every return a sure view of its parameter or the parameter itself): a write into ``d``
   writes into ``v`` (one memory, one version counter), and a write into ``v`` into ``d``, as for
   ``d = v.transpose(0, 1)`` written inline; a method of the caller's class too (``d =
   self._view(h)``, no class of the file extending the class). recall54 followed such a helper
   only inline, as an op's operand (``torch.max(z, diagonal(v))``), and no method.
2. ``for est in out: loss, est = f(src, est)``: at the call, ``est`` is this turn's row of ``out``
   (an output of ``unbind`` for PyTorch), never the last turn's result: the ``for`` head rebinds it
   before the body runs again (svoice's loss loop, set19/1503, handed a row to a helper that writes
   into it).

Each look-alike that raises is run with torch; each control runs and stays unproven: a helper that
copies (``clone``, ``reshape`` of a transposed tensor), the base rebound between the helper's call
and the write, a name bound on one path only, a loop that rebinds inside a nested loop.
"""

from __future__ import annotations

import pytest

from tests.programs import raises_proven, runs_unproven

HEAD = """import torch


def diagonal(x):
    return torch.diagonal(x, dim1=1, dim2=2)


def tview(x):
    return x.transpose(0, 1)


def same(x):
    return x


def copied(x):
    return x.clone()


def flat(x):
    return x.reshape(-1)


def scaled_loss(src, est):
    est *= (src > 0).float()
    return (est * src).sum(), est

"""

RAISING = {
    "diagonal-bound-base-saved": """
def main():
    w = torch.randn(2, 3, 3, requires_grad=True)
    v = 0.5 * (torch.eye(3) + w)
    s = torch.sin(v)
    d = diagonal(v)
    d.add_(1.0)  # MARK
    (s.sum() + v.sum()).backward()
""",
    "transpose-bound-output-saved": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    e = (w * 2).exp()
    t = tview(e)
    t[0] = 0.0  # MARK
    e.sum().backward()
""",
    "view-of-the-helper-view": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    e = (w * 2).exp()
    t = tview(e)
    r = t[1:]
    r.mul_(2)  # MARK
    e.sum().backward()
""",
    "helper-returns-its-argument": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    e = torch.sigmoid(w)
    a = same(e)
    a += 1  # MARK
    e.sum().backward()
""",
    "helper-view-of-a-leaf": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    t = tview(w)
    t.mul_(2)  # MARK
""",
    "base-written-helper-view-saved": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    v = w * 2
    d = tview(v)
    s = torch.sin(d)
    v.add_(1)  # MARK
    s.sum().backward()
""",
    "method-view-bound": """
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def _view(self, x):
        return x.transpose(0, 1)

    def forward(self, x):
        h = self.lin(x).exp()
        d = self._view(h)
        d[0] = 0.0  # MARK
        return h.sum()


def main():
    Net()(torch.randn(3, 4)).backward()
""",
}

CONTROLS = {
    "method-overridden-by-a-copying-subclass": """
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def _view(self, x):
        return x.transpose(0, 1)

    def forward(self, x):
        h = self.lin(x).exp()
        d = self._view(h)
        d[0] = 0.0  # MARK
        return h.sum() + d.sum()


class Copying(Net):
    def _view(self, x):
        return x.clone()


def main():
    Copying()(torch.randn(3, 4)).backward()
""",
    "helper-copies": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    e = (w * 2).exp()
    t = copied(e)
    t[0] = 0.0  # MARK
    (e.sum() + t.sum()).backward()
""",
    "reshape-of-a-transpose-copies": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    e = (w * 2).exp().t()
    t = flat(e)
    t[0] = 0.0  # MARK
    (e.sum() + t.sum()).backward()
""",
    "base-rebound-after-the-view": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    v = w * 2
    d = tview(v)
    v = w * 3
    s = torch.sin(v)
    d.add_(1)  # MARK
    (s.sum() + d.sum()).backward()
""",
    "view-on-one-path-only": """
def main(flag=False):
    w = torch.randn(3, 4, requires_grad=True)
    e = (w * 2).exp()
    t = torch.zeros(4, 3)
    if flag:
        t = tview(e)
    t[0] = 0.0  # MARK
    (e.sum() + t.sum()).backward()
""",
    "helper-view-of-what-nothing-saved": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    v = w * 2
    d = tview(v)
    d.add_(1)  # MARK
    (v.sum() + d.sum()).backward()
""",
}

LOOPS = {
    "row-handed-then-rebound": ("""
def main():
    lin = torch.nn.Linear(4, 4)
    out = torch.stack([lin(torch.randn(3, 4)), lin(torch.randn(3, 4))])
    src = torch.randn(3, 4)
    total = 0
    for est in out:
        loss, est = scaled_loss(src, est)
        total = total + loss
    total.backward()
""", True),
    "row-cloned-then-rebound": ("""
def main():
    lin = torch.nn.Linear(4, 4)
    out = torch.stack([lin(torch.randn(3, 4)), lin(torch.randn(3, 4))])
    src = torch.randn(3, 4)
    total = 0
    for est in out:
        est = est.clone()
        loss, est = scaled_loss(src, est)
        total = total + loss
    total.backward()
""", False),
    "rebound-in-a-nested-loop": ("""
def main():
    lin = torch.nn.Linear(4, 4)
    out = torch.stack([lin(torch.randn(3, 4)), lin(torch.randn(3, 4))])
    src = torch.randn(3, 4)
    total = 0
    for est in out:
        for _ in range(2):
            loss, est = scaled_loss(src, est.clone())
            total = total + loss
    total.backward()
""", False),
}

# The write inside scaled_loss is the marked line of the loop look-alikes.
_LOSS_WRITE = HEAD.splitlines().index("    est *= (src > 0).float()") + 1


def _marked(body: str, line: int) -> str:
    lines = (HEAD + body).splitlines()
    lines[line - 1] += "  # MARK"
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(RAISING))
def test_a_helper_view_bound_to_a_name_is_followed(name):
    message = "leaf Variable" if "leaf" in name else "modified by an inplace operation"
    raises_proven(HEAD + RAISING[name], message=message)


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_copies_rebindings_and_unsaved_views_stay_unproven(name):
    runs_unproven(HEAD + CONTROLS[name])


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_a_for_loop_rebinds_its_target_before_each_turn(name):
    body, raises = LOOPS[name]
    source = _marked(body, _LOSS_WRITE)
    if raises:
        raises_proven(source, message="is being modified inplace")
    else:
        runs_unproven(source)
