"""What other files' calls pass is gathered only for the calls some verdict reads (issue 27, stop 41).

A write into a function's parameter is proven through its callers in other files
(``CallFact.args_saved``: the caller's hazard analysis proves autograd saved the argument). Each
such fact is a question to the caller's hazard analysis; they are asked only of the calls of a
function whose write into a parameter is checked (``ProjectIndex.calls_saving``), and what a
call passes otherwise (tensor, requires grad, read after) only of the calls of the function some
analysis asks about, not of every call of their modules. The verdicts are those of the eager
gathering: the helper's write into the caller's saved activation is proven, the program dies in
backward, and a cached result is not reused once the caller passes something nothing saved.
"""

from __future__ import annotations

import textwrap

import pytest

from codemod.analysis import indexing
from codemod.analysis.syntax import target_key
from codemod.config import Settings
from codemod.engine.files import process_path
from codemod.engine.project import build_index
from tests.test_recall39_callers import _gradients, _line

HELPERS = """\
import torch


def merge(x, skip):
    x += skip
    return x


def scale(x, k):
    return x * k


def norm(x):
    return x / x.norm()
"""

MODEL = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from helpers import merge, norm, scale


class Up(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        h = F.relu(self.conv(x))
        g = norm(scale(x, 2.0))
        h = merge({passed}, g)
        return h


def compute():
    torch.manual_seed(0)
    up = Up()
    x = torch.randn(2, 3, 6, 6)
    up(x).sum().backward()
    return [round(float(v), 5) for v in up.conv.weight.grad.flatten()[:6]]
"""


def _write(tmp_path, passed: str = "h") -> list:
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "model.py").write_text(MODEL.replace("{passed}", passed))
    return [str(tmp_path / "helpers.py"), str(tmp_path / "model.py")]


def _proven(tmp_path, files: list, cache_dir=None) -> list:
    result = process_path(files[0], Settings(select=("IPF1",)), False, False, False, cache_dir,
                          build_index(files, cache_dir))
    return [f.span.line for f in result.findings]


@pytest.fixture
def asked(monkeypatch) -> dict:
    """The callees of the calls whose arguments were worked out: what they pass (``passed``) and
    what autograd saved (``saved``), each a question to the caller's analysis."""
    found: dict = {"passed": [], "saved": []}
    arguments, saved = indexing._arguments, indexing._saved_arguments

    def spy_arguments(model, resolver, site, callee, *rest, **kw):
        found["passed"].append(callee)
        return arguments(model, resolver, site, callee, *rest, **kw)

    def spy_saved(model, site, tensor):
        found["saved"].append(target_key(site.func))
        return saved(model, site, tensor)

    monkeypatch.setattr(indexing, "_arguments", spy_arguments)
    monkeypatch.setattr(indexing, "_saved_arguments", spy_saved)
    return found


def test_what_autograd_saved_is_asked_only_of_the_call_into_the_writer(tmp_path, asked):
    files = _write(tmp_path)
    assert _proven(tmp_path, files) == [_line(tmp_path, "helpers.py", "x += skip")]
    assert asked["saved"] == ["merge"]  # not `scale(x, 2.0)`, `norm(...)`: no write into their parameters
    assert _gradients(tmp_path) is None  # relu saved its output; the helper bumped its version


def test_what_a_call_passes_is_gathered_only_for_the_calls_asked_about(tmp_path, asked):
    """``norm``'s parameter is never asked about (nothing in it is written): its call's
    arguments are not worked out, although the same caller's other calls are."""
    _proven(tmp_path, _write(tmp_path))
    assert "helpers.merge" in asked["passed"] and "helpers.norm" not in asked["passed"]


def test_nothing_saved_before_the_call_is_silent_and_runs(tmp_path, asked):
    """The look-alike: the caller hands ``merge`` a clone (nothing saved it): no finding, and the
    program runs."""
    files = _write(tmp_path, passed="h.clone()")
    assert _proven(tmp_path, files) == []
    assert _gradients(tmp_path) is not None


def test_a_cached_result_is_not_reused_once_the_caller_passes_what_nothing_saved(tmp_path, asked):
    """The result cache keeps what the helper's verdict read of the caller's call (``Asking``:
    ``saving``); a caller edited to pass a clone (nothing saved) makes the cached result stale."""
    cache = str(tmp_path / "cache")
    files = _write(tmp_path)
    assert _proven(tmp_path, files, cache) == [_line(tmp_path, "helpers.py", "x += skip")]
    asked["saved"].clear()
    assert _proven(tmp_path, files, cache) == [_line(tmp_path, "helpers.py", "x += skip")]
    assert asked["saved"] == []  # answered from the cache, call by call
    _write(tmp_path, passed="h.clone()")
    assert _proven(tmp_path, files, cache) == []


def test_the_call_facts_are_those_the_eager_gathering_gives(tmp_path):
    """Gathered call by call on demand, what each call passes is what ``collect`` with
    ``arguments=True`` (every call at once) records."""
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.source import Source

    files = _write(tmp_path)
    index = build_index(files)
    eager = indexing.collect(SemanticModel(Source((tmp_path / "model.py").read_bytes())), "model",
                             frozenset(index.modules))
    for name in ("merge", "scale", "norm"):
        lazy = index.calls_saving(f"helpers.{name}", "helpers")
        assert lazy == [c for c in eager.calls if c.callee == f"helpers.{name}"], name
    assert any(c.args_saved for c in eager.calls)
