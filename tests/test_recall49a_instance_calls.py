"""Family B/C: a call through an instance of another file's class hands the callee its caller's facts
(stop 49).

``norm = Normalize(mean, std); norm(x)`` runs ``Normalize.__call__``; ``helper = Helper(); helper.apply(x)``
runs ``Helper.apply``. The project index listed such calls only as calls of a module's ``forward``, so
a transform's ``__call__`` or a helper's method in another file never learnt that its parameter is a
leaf that requires grad, a tensor autograd saved, or a tensor whose ``unbind`` views PyTorch refuses
to write: the write stayed in the possible tier or unflagged. A call ``v(x)`` / ``v.m(x)`` is now
recorded as a call of the class's ``__call__`` / ``m`` (``CallFact.bound``: positions after ``self``)
where every binding of ``v`` the caller's analysis sees is a construction of that one class (a local
name, ``self.attr`` set only so, ``Cls(...)(x)``).

Working look-alikes stay unproven: an instance whose name is rebound to another class, a receiver
that is a parameter (it may be a subclass overriding the method), a call under ``no_grad``, a caller
passing a detached tensor. Every program is new (none is a corpus case); each original dies with the
in-place error when run, each look-alike runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

TFM = """\
    class Denorm:
        def __init__(self, mean, std):
            self.mean = mean
            self.std = std

        def __call__(self, tensor):
            for t, m, s in zip(tensor, self.mean, self.std):
                t.mul_(s).add_(m)
            return tensor


    class Helper:
        def __init__(self, k=2.0):
            self.k = k

        def apply(self, x):
            x /= self.k
            return x


    class SafeHelper(Helper):
        def apply(self, x):
            return x / self.k
"""

WRITES = ("t.mul_(s).add_(m)", "x /= self.k")
MESSAGES = ("modified by an inplace operation", "a leaf Variable that requires grad",
            "is a view and is being modified inplace")

CALLER = """\
    import torch
    import torch.nn as nn
    from tfm import Denorm, Helper, SafeHelper


    def compute():
        torch.manual_seed(0)
        w = torch.rand(3, 4, requires_grad=True)
        {body}
        loss.backward()
        return [round(float(v), 5) for v in w.grad.flatten()[:6]]
"""

# originals: each dies in backward (or at the write)
CALL_VIEWS = """\
    y = w * 2
    d = Denorm([0.5] * 3, [0.5] * 3)
    loss = d(y).sum()"""
METHOD_LEAF = """\
    h = Helper(3.0)
    loss = h.apply(w).sum()"""
METHOD_SAVED = """\
    y = w.exp()
    h = Helper()
    loss = h.apply(y).sum()"""
TEMPORARY_INSTANCE = """\
    y = w.exp()
    loss = Helper().apply(y).sum()"""

MODULE = """\
    import torch
    import torch.nn as nn
    from tfm import Denorm


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.denorm = Denorm([0.5] * 3, [2.0] * 3)

        def forward(self, x):
            h = self.fc(x)
            return self.denorm(h)


    def compute():
        torch.manual_seed(0)
        net = Net()
        net(torch.rand(3, 4)).sum().backward()
        return [round(float(v), 5) for v in net.fc.weight.grad.flatten()[:6]]
"""

# look-alikes: each runs
REBOUND = """\
    y = w * 2
    d = Denorm([0.5] * 3, [0.5] * 3)
    d = SafeHelper()
    loss = d.apply(y).sum()"""
PARAMETER_RECEIVER = """\
    def run(h, x):
        return h.apply(x)
    loss = run(SafeHelper(), w).sum()"""
NO_GRAD = """\
    y = w * 2
    d = Denorm([0.5] * 3, [0.5] * 3)
    with torch.no_grad():
        z = d(y)
    loss = (w * 3).sum() + z.sum()"""
DETACHED = """\
    h = Helper()
    out = h.apply(w.detach().clone())
    loss = (w * 3).sum() + out.sum()"""


def _write(tmp_path, files: dict) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))


def _caller(body: str) -> str:
    return CALLER.replace("{body}", textwrap.indent(textwrap.dedent(body), " " * 8).lstrip())


def _findings(tmp_path) -> list:
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--select", "IPF1,IPF2",
                          "--output-format", "json", "model.py", "tfm.py"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    return sorted((f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"], f["status"])
                  for f in json.loads(run.stdout)["findings"])


def _proven_writes(tmp_path) -> list:
    lines = [s.strip() for s in (tmp_path / "tfm.py").read_text().splitlines()]
    rows = {lines.index(w) + 1: w for w in WRITES}
    return sorted({rows[f[1]] for f in _findings(tmp_path) if f[0] == "tfm.py" and f[1] in rows
                   and f[2].startswith("IPF1")})


def _result(tmp_path):
    """What ``compute()`` returns, run in a fresh interpreter; None where it raises the in-place error."""
    run = subprocess.run([sys.executable, "-c", "import json, model\n"
                          "try:\n    print(json.dumps(model.compute()))\n"
                          "except RuntimeError as e:\n"
                          f"    assert any(m in str(e) for m in {MESSAGES!r}), e\n    print('null')\n"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("body, write", [(CALL_VIEWS, WRITES[0]), (METHOD_LEAF, WRITES[1]),
                                         (METHOD_SAVED, WRITES[1]), (TEMPORARY_INSTANCE, WRITES[1])],
                         ids=["call-unbind-views", "method-leaf", "method-saved", "temporary-instance"])
def test_a_write_through_an_instance_call_is_proven(tmp_path, body, write):
    """The caller's fact (a tensor that requires grad iterated into views, a leaf, a saved output)
    reaches the class's ``__call__`` / method: the write is proven, and the program dies."""
    _write(tmp_path, {"tfm.py": TFM, "model.py": _caller(body)})
    assert _result(tmp_path) is None
    assert _proven_writes(tmp_path) == [write], _findings(tmp_path)


def test_a_module_attribute_holding_a_callable_instance(tmp_path):
    """``self.denorm = Denorm(...)`` set only so, called in ``forward`` on a layer's output."""
    _write(tmp_path, {"tfm.py": TFM, "model.py": MODULE})
    assert _result(tmp_path) is None
    assert _proven_writes(tmp_path) == [WRITES[0]], _findings(tmp_path)


@pytest.mark.parametrize("body", [REBOUND, PARAMETER_RECEIVER, NO_GRAD, DETACHED],
                         ids=["rebound", "parameter-receiver", "no-grad", "detached"])
def test_look_alikes_stay_unproven(tmp_path, body):
    """The receiver's class is not known (rebound, a parameter), the call runs with grad off, or the
    caller hands a tensor that requires no grad: nothing proven, and the program runs."""
    _write(tmp_path, {"tfm.py": TFM, "model.py": _caller(body)})
    assert _result(tmp_path) is not None
    assert _proven_writes(tmp_path) == [], _findings(tmp_path)


SAME_FILE = """\
    import torch


    class Scaler:
        def __init__(self, k):
            self.k = k

        def scale(self, x):
            x /= self.k
            return x


    class SafeScaler(Scaler):
        def scale(self, x):
            return x / self.k


    def compute():
        torch.manual_seed(0)
        w = torch.rand(3, requires_grad=True)
        {body}
        loss.backward()
        return [round(float(v), 5) for v in w.grad]
"""


def _same_file(tmp_path, body: str) -> tuple:
    text = textwrap.dedent(SAME_FILE).replace("{body}", textwrap.indent(textwrap.dedent(body), " " * 4).lstrip())
    (tmp_path / "model.py").write_text(text)
    (tmp_path / "other.py").write_text("import torch\n\n\ndef main():\n    return torch.zeros(1)\n")
    lines = [s.strip() for s in text.splitlines()]
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--select", "IPF1",
                          "--output-format", "json", "model.py", "other.py"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    proven = [f["location"]["row"] for f in json.loads(run.stdout)["findings"]
              if f["filename"].endswith("model.py") and f["code"].startswith("IPF1")]
    return proven, lines.index("x /= self.k") + 1, _result(tmp_path)


@pytest.mark.parametrize("body", ["s = Scaler(2.0)\nloss = s.scale(w).sum()",
                                  "loss = Scaler(2.0).scale(w).sum()"], ids=["named", "temporary"])
def test_a_method_of_a_local_instance_in_the_same_file(tmp_path, body):
    """``s = Scaler(2.0); s.scale(w)`` in the class's own file hands ``scale`` the leaf ``w``: the
    write into it is proven (the leaf fact reaches a method through the instance's call)."""
    proven, write, result = _same_file(tmp_path, body)
    assert result is None
    assert write in proven, proven


@pytest.mark.parametrize("body", ["s = Scaler(2.0)\ns = SafeScaler(2.0)\nloss = s.scale(w).sum()",
                                  "s = Scaler(2.0)\nwith torch.no_grad():\n    s.scale(w.detach())\nloss = (3 * w).sum()",
                                  "s = Scaler(2.0)\nloss = s.scale(w.detach().clone()).sum() + (3 * w).sum()"],
                         ids=["rebound", "no-grad", "detached"])
def test_look_alikes_of_a_local_instance_stay_unproven(tmp_path, body):
    proven, write, result = _same_file(tmp_path, body)
    assert result is not None
    assert write not in proven, proven


HELPERS = """\
    import torch


    def denorm(tensor):
        out = tensor.clone()
        for ch in out[0]:
            ch.mul_(2.0)
        return out


    def other(x):
        return x + 1
"""

ALIASED = """\
    import os
    import sys
    from importlib import import_module

    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    hlp = import_module("hlp")
    denorm, other = hlp.denorm, hlp.other
    {more}


    def compute():
        w = torch.rand(1, 3, 4, requires_grad=True)
        {call}
        out.sum().backward()
        return [round(float(v), 5) for v in w.grad.flatten()[:6]]
"""


def _aliased(tmp_path, more: str, call: str) -> tuple:
    _write(tmp_path, {"hlp.py": HELPERS, "model.py": ALIASED.replace("{more}", more).replace("{call}", call)})
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--select", "IPF1",
                          "--output-format", "json", "model.py", "hlp.py"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    lines = [s.strip() for s in (tmp_path / "hlp.py").read_text().splitlines()]
    proven = [f["location"]["row"] for f in json.loads(run.stdout)["findings"] if f["filename"].endswith("hlp.py")]
    return lines.index("ch.mul_(2.0)") + 1 in proven, _result(tmp_path)


def test_a_function_called_through_a_module_level_alias(tmp_path):
    """``denorm, other = hlp.denorm, hlp.other`` binds the names as ``from hlp import denorm, other``
    does: the alias is no use of the function that could hand it anywhere (its calls are), so what
    ``denorm(w * 2)`` passes reaches ``denorm``: the write into a row of its clone is proven."""
    assert _aliased(tmp_path, "", "out = denorm(w * 2)") == (True, None)


@pytest.mark.parametrize("more, call", [
    ("handlers = {'d': denorm}", "out = handlers['d'](w.detach() * 2) + w"),
    ("denorm = other", "out = denorm(w * 2)"),
], ids=["alias-handed-on", "alias-rebound"])
def test_an_alias_handed_on_or_rebound_stays_unproven(tmp_path, more, call):
    proven, result = _aliased(tmp_path, more, call)
    assert result is not None and not proven
