"""A call of the file's own function (or method) whose every ``return`` is a multi-view call of
one of its parameters (``return h.chunk(2, dim=1)``), or a view PyTorch refuses to modify
(``return Scale.apply(x)`` of a custom Function returning its input), gives the caller those
views: a write into one raises "... is a view and is being modified inplace" as if the caller
had called ``chunk`` itself. The tensor viewed is the caller's argument, so whether it requires
grad (and whether the caller reads it afterwards) is the caller's. Each program is run with
torch: the proven finding appears where the write raises, the default fix gives the gradients
of the program written out of place, and the look-alikes that run stay without one."""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import assert_same_results, fixed_source, process_in_project, raises_inplace, run_program

_REFUSED = "is a view and is being modified inplace"


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


HALVES = """\
import torch
import torch.nn as nn


def halves(h):
    return h.chunk(2, dim=1)


class Coupling(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.net = nn.Linear(ch // 2, ch // 2)

    def forward(self, x):
        a, b = halves(x)
        b += self.net(a)
        return torch.cat([a, b], dim=1)


def main():
    torch.manual_seed(0)
    stem = nn.Linear(4, 4)
    block = Coupling(4)
    out = block(stem(torch.randn(3, 4)))
    out.sum().backward()
    return [out.detach(), stem.weight.grad, block.net.weight.grad]
"""

HEADS = """\
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.d = d

    def split_qkv(self, t):
        return t.split(self.d, dim=-1)

    def forward(self, x):
        q, k, v = self.split_qkv(self.qkv(x))
        q.mul_(self.d ** -0.5)
        att = (q @ k.transpose(-2, -1)).softmax(-1)
        return att @ v


def main():
    torch.manual_seed(0)
    net = Attention(4)
    out = net(torch.randn(2, 5, 4))
    out.sum().backward()
    return [out.detach(), net.qkv.weight.grad]
"""

SCALED_GRAD = """\
import torch
import torch.nn as nn


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


def scale_grad(x, scale):
    return ScaleGrad.apply(x, scale)


def head(w, x):
    h = scale_grad(x @ w, 0.5)
    h += 1.0
    return h.tanh()


def main():
    torch.manual_seed(0)
    w = torch.randn(3, 3, requires_grad=True)
    out = head(w, torch.randn(2, 3))
    out.sum().backward()
    return [out.detach(), w.grad]
"""

# the same programs written out of place: what the default fix must compute
_OUT_OF_PLACE = {
    "halves": HALVES.replace("b += self.net(a)", "b = b + self.net(a)"),
    "heads": HEADS.replace("q.mul_(self.d ** -0.5)", "q = q.mul(self.d ** -0.5)"),
    "scaled-grad": SCALED_GRAD.replace("h += 1.0", "h = h + 1.0"),
}
_RAISING = {"halves": HALVES, "heads": HEADS, "scaled-grad": SCALED_GRAD}


@pytest.mark.parametrize("case", sorted(_RAISING))
def test_a_write_into_a_view_a_callee_returns_is_proven(case):
    source = _RAISING[case]
    assert raises_inplace(source, message=_REFUSED)
    assert [code for code, _ in _proven(source)] == ["IPF106"], _proven(source)


@pytest.mark.parametrize("case", sorted(_RAISING))
def test_the_default_fix_gives_the_out_of_place_gradients(case):
    fixed = fixed_source(_RAISING[case], project=True)
    assert fixed != _RAISING[case]
    got, want = run_program(fixed), run_program(_OUT_OF_PLACE[case])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.allclose(g, w), (fixed, g, w)


# ------------------------------------------------------------------ look-alikes that run
ONE_RETURN_COPIES = HALVES.replace(
    "    return h.chunk(2, dim=1)\n",
    "    if h.size(1) > 8:\n        return h.chunk(2, dim=1)\n    return [p.clone() for p in h.chunk(2, dim=1)]\n")

NOTHING_REQUIRES_GRAD = """\
import torch


def halves(h):
    return h.chunk(2, dim=1)


def main():
    buf = torch.zeros(3, 4)
    a, b = halves(buf)
    b += 1.0
    return [buf]
"""

CLONING_FUNCTION = SCALED_GRAD.replace("        return x\n", "        return x.clone()\n")

RETURNS_COPIES = HALVES.replace("    return h.chunk(2, dim=1)\n",
                                "    n = h.size(1) // 2\n    return h[:, :n].clone(), h[:, n:].clone()\n")

UNDER_NO_GRAD = """\
import torch


def halves(h):
    return h.chunk(2, dim=1)


def main():
    w = torch.ones(3, 4, requires_grad=True)
    x = w * 2
    with torch.no_grad():
        a, b = halves(x)
        b += 1.0
    return [x.detach()]
"""


@pytest.mark.parametrize("source", [ONE_RETURN_COPIES, NOTHING_REQUIRES_GRAD, CLONING_FUNCTION,
                                    RETURNS_COPIES, UNDER_NO_GRAD],
                         ids=["one-return-copies", "nothing-requires-grad", "function-clones",
                              "copies", "under-no-grad"])
def test_look_alikes_that_run_have_no_proven_finding(source):
    run_program(source)
    assert not _proven(source), _proven(source)
    assert_same_results(source)


BASE_READ_AFTER = """\
import torch


def halves(h):
    return h.chunk(2, dim=1)


def main():
    w = torch.ones(3, 4, requires_grad=True)
    x = w * 2
    a, b = halves(x)
    b.mul_(3.0)
    out = x.sum()
    out.backward()
    return [out.detach(), w.grad]
"""


def test_a_caller_reading_the_tensor_viewed_afterwards_gets_no_safe_fix():
    """In place the write would reach ``x``, which the caller reads afterwards: a copy would
    hide it, so the default fix leaves the program alone."""
    assert raises_inplace(BASE_READ_AFTER, message=_REFUSED)
    assert [code for code, _ in _proven(BASE_READ_AFTER)] == ["IPF106"]
    assert fixed_source(BASE_READ_AFTER, project=True) == BASE_READ_AFTER


# ------------------------------------------------------------------ the callee in another file
HELPERS = """\
import torch


def halves(h):
    return torch.chunk(h, 2, dim=1)
"""

COPYING_HELPERS = """\
import torch


def halves(h):
    n = h.size(1) // 2
    return h[:, :n].clone(), h[:, n:].clone()
"""

HALVES_IMPORTED = """\
import torch
import torch.nn as nn

from helpers import halves


class Coupling(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.net = nn.Linear(ch // 2, ch // 2)

    def forward(self, x):
        a, b = halves(x)
        b += self.net(a)
        return torch.cat([a, b], dim=1)


def main():
    torch.manual_seed(0)
    stem = nn.Linear(4, 4)
    block = Coupling(4)
    out = block(stem(torch.randn(3, 4)))
    out.sum().backward()
    return [out.detach(), stem.weight.grad, block.net.weight.grad]
"""


def _two_files(tmp_path, helpers: str, case: str):
    """(proven findings of ``case.py``, what running its ``main`` raises or returns) with ``helpers.py`` beside it."""
    import sys

    from codemod.engine.pipeline import process_source
    from codemod.engine.project import build_index

    (tmp_path / "helpers.py").write_text(helpers)
    (tmp_path / "case.py").write_text(case)
    index = build_index([str(tmp_path / "case.py"), str(tmp_path / "helpers.py")])
    proven = []
    for name, text in (("case", case), ("helpers", helpers)):
        result = process_source(text.encode(), str(tmp_path / f"{name}.py"), Settings(), project=index, module_name=name)
        assert result.error is None, result.error
        proven += [f"{name}:{f.code}" for f in result.findings if f.code.startswith("IPF1")]
    sys.modules.pop("helpers", None)  # another test's `helpers` (imported in this process) is not this one
    sys.path.insert(0, str(tmp_path))
    try:
        space: dict = {"__name__": "case"}
        exec(compile(case, "case.py", "exec"), space)
        try:
            outcome: object = space["main"]()
        except RuntimeError as error:
            outcome = error
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("helpers", None)
    return proven, outcome


def test_a_write_into_views_an_imported_function_returns_is_proven(tmp_path):
    proven, outcome = _two_files(tmp_path, HELPERS, HALVES_IMPORTED)
    assert isinstance(outcome, RuntimeError) and _REFUSED in str(outcome)
    assert proven == ["case:IPF106"]


def test_an_imported_function_returning_copies_gives_no_proven_finding(tmp_path):
    proven, outcome = _two_files(tmp_path, COPYING_HELPERS, HALVES_IMPORTED)
    assert not isinstance(outcome, Exception)
    assert proven == []


# ------------------------------------------------------------------ the caller in another file
FILLING_HELPERS = """\
import torch


def fill_invalid(scores, valid):
    scores[~valid] = -1e4
    return scores.softmax(-1)
"""

SPLIT_AND_FILL = """\
import torch
import torch.nn as nn

from helpers import fill_invalid


class Head(nn.Module):
    def __init__(self, dim, a, b):
        super().__init__()
        self.proj = nn.Linear(dim, a + b)
        self.a, self.b = a, b

    def forward(self, x, valid):
        word, copy = self.proj(x).split([self.a, self.b], dim=-1)
        return fill_invalid(word, valid).sum() + copy.sum()


def main():
    torch.manual_seed(0)
    head = Head(6, 4, 3)
    out = head(torch.randn(5, 6), torch.tensor([True, False, True, True, True]))
    out.backward()
    return [out.detach(), head.proj.weight.grad]
"""

# the caller copies the part first: the helper writes into a tensor of its own
SPLIT_COPY_AND_FILL = SPLIT_AND_FILL.replace("fill_invalid(word, valid)", "fill_invalid(word.clone(), valid)")
# nothing requires grad: the write reaches the buffer, as meant
FILL_A_BUFFER = """\
import torch

from helpers import fill_invalid


def main():
    word, copy = torch.zeros(5, 7).split([4, 3], dim=-1)
    probs = fill_invalid(word, torch.tensor([True, False, True, True, True]))
    return [probs, word]
"""


def test_a_helper_writing_into_a_multi_view_output_another_file_passes_is_proven(tmp_path):
    proven, outcome = _two_files(tmp_path, FILLING_HELPERS, SPLIT_AND_FILL)
    assert isinstance(outcome, RuntimeError) and _REFUSED in str(outcome)
    assert proven == ["helpers:IPF104"], proven


# the caller evaluates with grad off: PyTorch allows the write
SPLIT_AND_FILL_WITHOUT_GRAD = SPLIT_AND_FILL.replace(
    "        word, copy = self.proj(x).split([self.a, self.b], dim=-1)\n        return fill_invalid(word, valid).sum() + copy.sum()",
    "        with torch.no_grad():\n            word, copy = self.proj(x).split([self.a, self.b], dim=-1)\n"
    "            return fill_invalid(word, valid).sum() + copy.sum()").replace(
    "    out.backward()\n    return [out.detach(), head.proj.weight.grad]", "    return [out]")


@pytest.mark.parametrize("case", [SPLIT_COPY_AND_FILL, FILL_A_BUFFER, SPLIT_AND_FILL_WITHOUT_GRAD],
                         ids=["copied-first", "nothing-requires-grad", "grad-off"])
def test_a_helper_given_no_refused_view_by_another_file_has_no_proven_finding(tmp_path, case):
    proven, outcome = _two_files(tmp_path, FILLING_HELPERS, case)
    assert not isinstance(outcome, Exception), outcome
    assert proven == [], proven


FLAGGED_HELPERS = """\
import torch


def activate(x, inplace=False):
    if inplace:
        return x.relu_()
    return x.relu()
"""

SPLIT_AND_ACTIVATE = """\
import torch
import torch.nn as nn

from helpers import activate


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 6)

    def forward(self, x):
        value, gate = self.proj(x).chunk(2, dim=-1)
        return activate(value) * gate.sigmoid()


def main():
    torch.manual_seed(0)
    head = Head()
    out = head(torch.randn(3, 4)).sum()
    out.backward()
    return [out.detach(), head.proj.weight.grad]
"""


def test_a_write_a_flag_guards_is_not_proven_from_another_files_call(tmp_path):
    """``activate(value)`` leaves ``inplace`` False: the write may not run for that call (torch's
    own ``F.relu`` is written so), and what another file passes is all that is known of it."""
    proven, outcome = _two_files(tmp_path, FLAGGED_HELPERS, SPLIT_AND_ACTIVATE)
    assert not isinstance(outcome, Exception), outcome
    assert proven == [], proven
