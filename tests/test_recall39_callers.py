"""Family A: what flows into a function from its callers (issue 24, group G2).

Four facts, each with working look-alikes that must stay unproven:

- a call of a function of the file (``helper(x)``, ``self._terms(r)``) is a tensor where every
  ``return`` of the callee gives one (only where the file shows the callee alone: bound once, not
  overridden by a class of the file, undecorated);
- a parameter of a function of another file of the run is a tensor where every call the project
  index knows passes one (``args_tensor``, as the caller's own analysis saw it): a reference to
  the function, or one call passing something else, leaves it unknown;
- a tensor that requires grad is floating (integral tensors cannot require grad), and
  ``torch.cat`` / ``torch.stack`` of a floating piece is floating: an op that also takes integral
  tensors (``prod``, ``matmul``) saves what it reads where the analysis shows either;
- ``x[:, 3:] *= x[:, 2:3]``: the write's own ``*=`` saves its right operand, a view of ``x``,
  for the gradient of the part it writes, and the write then bumps ``x``'s version counter (``+=``
  saves nothing; a clone, an advanced index are copies).

Every program is new (none is a corpus case); the originals die in backward, the fixed ones give
the gradients of the out-of-place program.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest


def _project(tmp_path, files: dict) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))


def _findings(tmp_path, names, select: str = "IPF1,IPF2") -> list:
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--select", select,
                          "--output-format", "json", *names],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    return sorted((f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"], f["status"])
                  for f in json.loads(run.stdout)["findings"])


def _fix(tmp_path, names) -> None:
    run = subprocess.run([sys.executable, "-m", "codemod", "fix", "--no-cache", *names],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr


def _gradients(tmp_path, module: str = "model"):
    """What ``compute()`` returns, run in a fresh interpreter; None where backward raises the
    in-place error."""
    run = subprocess.run([sys.executable, "-c", f"import json, {module}\n"
                          f"try:\n    print(json.dumps({module}.compute()))\n"
                          "except RuntimeError as e:\n"
                          "    assert 'modified by an inplace operation' in str(e), e\n    print('null')\n"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _line(tmp_path, name: str, text: str) -> int:
    return [s.strip() for s in (tmp_path / name).read_text().splitlines()].index(text) + 1


def _proven_and_fixed(tmp_path, files: dict, names, module: str, write: str, out_of_place: str) -> None:
    """The write is the one proven finding, with a safe fix; the original dies in backward; the
    fixed program's result is the out-of-place program's."""
    _project(tmp_path, files)
    at = _line(tmp_path, module + ".py", write)
    found = [f for f in _findings(tmp_path, names) if f[2].startswith("IPF1")]
    assert [(f[0], f[1], f[3]) for f in found] == [(module + ".py", at, "safe")], found
    assert _gradients(tmp_path, "model") is None
    _fix(tmp_path, names)
    fixed = _gradients(tmp_path, "model")
    _project(tmp_path, {k: v.replace(write, out_of_place) for k, v in files.items()})
    want = _gradients(tmp_path, "model")
    assert want is not None and fixed == want


def _proven(tmp_path, files: dict, names) -> list:
    _project(tmp_path, files)
    return [f for f in _findings(tmp_path, names) if f[2].startswith("IPF1")]


# ---------------------------------------------------------------- a helper's return kind

PAIRS = """\
import torch
import torch.nn as nn


class Pairs(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.linspace(0.5, 1.5, n))
        self.idx = [[0, 1], [1, 2]]
        self.scale = torch.tensor([2.0, 3.0])

    def forward(self, r):
        d = self._terms(r)
        return self._pair_products(d)

    def _terms(self, r):
        {terms}

    def _pair_products(self, d):
        x = d[..., self.idx]
        x = x.prod(-1)
        x *= self.scale
        return x.sum(-1)
{extra}

def compute():
    torch.manual_seed(0)
    m = Pairs(3)
    m(torch.rand(4, 3) + 0.5).sum().backward()
    return [m.w.grad.tolist()]
"""
OTHER = "import torch\n\n\ndef unrelated():\n    return torch.zeros(1)\n"


def _pairs(terms: str, extra: str = "") -> dict:
    return {"model.py": PAIRS.format(terms=terms, extra=extra), "other.py": OTHER}


def test_a_method_s_return_makes_its_caller_s_value_a_tensor(tmp_path):
    _proven_and_fixed(tmp_path, _pairs("return torch.tanh(self.w * r) + r"), ["model.py", "other.py"], "model",
                      "x *= self.scale", "x = x * self.scale")


@pytest.mark.parametrize("terms, extra", [
    # one path returns None: the call's result is not known to be a tensor
    ("if r.dim() > 1:\n            return torch.tanh(self.w * r) + r", ""),
    # a class of the file overrides the helper: `self._terms` may run the override
    ("return torch.tanh(self.w * r) + r", "\n\nclass Lists(Pairs):\n    def _terms(self, r):\n        return r.tolist()\n"),
])
def test_a_helper_that_may_return_something_else_proves_nothing(tmp_path, terms, extra):
    assert _proven(tmp_path, _pairs(terms, extra), ["model.py", "other.py"]) == []


# ---------------------------------------------------------------- callers in another file

HELPERS = """\
import torch


def pair_scores(feats, weight):
    s = feats.prod(-1)
    s *= weight
    return s.sum()
"""

CALLER = """\
import torch
import torch.nn as nn

import helpers


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, x):
        h = self.fc(x)
        return helpers.pair_scores(h.view(-1, 2, 2), 0.5)
{extra}

def compute():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(5, 3)).backward()
    return [p.grad.flatten().tolist() for p in net.parameters()]
"""


def test_a_helper_s_parameter_is_what_every_caller_in_the_run_passes(tmp_path):
    files = {"helpers.py": HELPERS, "model.py": CALLER.format(extra="")}
    _project(tmp_path, files)
    at = _line(tmp_path, "helpers.py", "s *= weight")
    found = [f for f in _findings(tmp_path, ["model.py", "helpers.py"]) if f[2].startswith("IPF1")]
    assert [(f[0], f[1], f[3]) for f in found] == [("helpers.py", at, "safe")]
    assert _gradients(tmp_path) is None
    _fix(tmp_path, ["model.py", "helpers.py"])
    assert "s = s * weight" in (tmp_path / "helpers.py").read_text()
    fixed = _gradients(tmp_path)
    (tmp_path / "helpers.py").write_text(HELPERS.replace("s *= weight", "s = s * weight"))
    assert fixed is not None and fixed == _gradients(tmp_path)


@pytest.mark.parametrize("extra", [
    # another caller passes a list: the parameter is no known tensor
    "\n\ndef table():\n    return helpers.pair_scores([[1.0, 2.0]], 3)\n",
    # a reference: its calls cannot be followed
    "\n\nSCORE = helpers.pair_scores\n",
])
def test_a_caller_passing_something_else_or_a_reference_proves_nothing(tmp_path, extra):
    files = {"helpers.py": HELPERS, "model.py": CALLER.format(extra=extra)}
    assert _proven(tmp_path, files, ["model.py", "helpers.py"]) == []


def test_a_caller_passing_a_tensor_that_requires_no_grad_stays_unproven(tmp_path):
    caller = CALLER.format(extra="").replace("helpers.pair_scores(h.view(-1, 2, 2), 0.5)",
                                             "h.sum() + helpers.pair_scores(torch.rand(3, 2, 2), 0.5)")
    files = {"helpers.py": HELPERS, "model.py": caller}
    assert _proven(tmp_path, files, ["model.py", "helpers.py"]) == []
    assert _gradients(tmp_path) is not None  # it runs


def test_a_helper_checked_alone_does_not_see_its_callers(tmp_path):
    _project(tmp_path, {"helpers.py": HELPERS, "model.py": CALLER.format(extra="")})
    assert [f for f in _findings(tmp_path, ["helpers.py"]) if f[2].startswith("IPF1")] == []


# ---------------------------------------------------------------- floating: requires grad, cat

CHAIN = """\
import torch
import torch.nn as nn


def chain(rot, offs):
    top = torch.cat([rot, offs[..., None]], dim=-1)
    g = top.clone()
    for i in range(1, 4):
        g[:, i] = torch.matmul(top[:, i, :, :2], g[:, i - 1])
    return g


def compute():
    torch.manual_seed(0)
    {make}
    g = chain(rot, torch.rand(2, 4, 2))
    g.sum().backward()
    return [{grads}]
"""


def test_a_write_into_what_matmul_saved_of_a_tensor_requiring_grad_is_proven(tmp_path):
    files = {"model.py": CHAIN.format(make="lin = nn.Linear(3, 2)\n    rot = lin(torch.rand(2, 4, 2, 3))",
                                      grads="p.grad.flatten().tolist() for p in lin.parameters()"),
             "other.py": OTHER}
    _proven_and_fixed(tmp_path, files, ["model.py", "other.py"], "model",
                      "g[:, i] = torch.matmul(top[:, i, :, :2], g[:, i - 1])",
                      "g = torch.cat([g[:, :i], torch.matmul(top[:, i, :, :2], g[:, i - 1])[:, None], g[:, i + 1:]], 1)")


def test_integral_pieces_of_cat_leave_matmul_s_save_unproven(tmp_path):
    files = {"model.py": CHAIN.format(make="rot = torch.randint(0, 3, (2, 4, 2, 2))", grads="g.tolist()")
             .replace("torch.rand(2, 4, 2)", "torch.randint(0, 3, (2, 4, 2))").replace("g.sum().backward()", "pass"),
             "other.py": OTHER}
    assert _proven(tmp_path, files, ["model.py", "other.py"]) == []
    assert _gradients(tmp_path) is not None


# ---------------------------------------------------------------- the write saves its own operand

SELF = """\
import torch
import torch.nn as nn


def compute():
    torch.manual_seed(0)
    lin = nn.Linear(3, 6)
    x = lin(torch.randn(4, 3)) * 1.0
    {write}
    x.sum().backward()
    return [p.grad.flatten().tolist() for p in lin.parameters()]
"""


@pytest.mark.parametrize("write", ["x[:, 3:] *= x[:, 2:3]", "x[:, 3:] /= x[:, 2:3]", "x[1] *= x[0]"])
def test_a_write_whose_own_op_saved_a_view_of_the_written_tensor_is_proven(tmp_path, write):
    files = {"model.py": SELF.format(write=write), "other.py": OTHER}
    if write.startswith("x[1]"):
        out = "x = torch.cat([x[:1], (x[1] * x[0])[None], x[2:]])"
    else:
        op = "*" if "*=" in write else "/"
        out = f"x = torch.cat([x[:, :3], x[:, 3:] {op} x[:, 2:3]], 1)"
    _proven_and_fixed(tmp_path, files, ["model.py", "other.py"], "model", write, out)


@pytest.mark.parametrize("write", [
    "x[:, 3:] += x[:, 2:3]",  # add saves nothing
    "x[:, 3:] *= x[:, 2:3].clone()",  # a copy: the write leaves it alone
    "x[:, 3:] *= x[:, [2]]",  # advanced indexing copies
])
def test_a_write_whose_own_op_saves_no_view_of_it_is_not_proven(tmp_path, write):
    files = {"model.py": SELF.format(write=write), "other.py": OTHER}
    assert _proven(tmp_path, files, ["model.py", "other.py"]) == []
    assert _gradients(tmp_path) is not None  # it runs


def test_a_tensor_that_requires_no_grad_may_write_into_itself(tmp_path):
    source = SELF.format(write="x[:, 3:] *= x[:, 2:3]").replace(
        "lin(torch.randn(4, 3)) * 1.0", "torch.randn(4, 6)").replace(
        "    x.sum().backward()\n    return [p.grad.flatten().tolist() for p in lin.parameters()]", "    return x.tolist()")
    files = {"model.py": source, "other.py": OTHER}
    assert _proven(tmp_path, files, ["model.py", "other.py"]) == []


# ---------------------------------------------------------------- a callee handing its argument back

HANDED = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.idn = nn.Identity()

    def forward(self, w):
        x = self.fc(w) * 2
        y = {call}
        y *= 3
        return x + y


def bump(t):
    t.add_(1)
    return t


def compute():
    torch.manual_seed(0)
    return Net()(torch.randn(2, 3)).tolist()
"""


@pytest.mark.parametrize("call", ["self.idn(x)", "bump(x)"])
def test_a_write_into_what_a_callee_handed_back_keeps_its_argument_s_fix_manual(tmp_path, call):
    """``y = self.idn(x)`` is ``x`` itself, read after the write: ``y = y * 3`` would leave ``x``
    unchanged and change what the program computes."""
    files = {"model.py": HANDED.format(call=call), "other.py": OTHER}
    _project(tmp_path, files)
    at = _line(tmp_path, "model.py", "y *= 3")
    statuses = [f[3] for f in _findings(tmp_path, ["model.py", "other.py"], "IPF") if f[1] == at]
    assert statuses == ["manual"]
    before = _gradients(tmp_path)
    _fix(tmp_path, ["model.py", "other.py"])
    assert "y *= 3" in (tmp_path / "model.py").read_text()
    assert _gradients(tmp_path) == before


def test_a_tensor_method_given_a_dtype_hands_no_argument_back(tmp_path):
    """``y = (x + 0).to(dt)``: a tensor method hands back its receiver at most, and ``dt`` is
    no tensor: reading ``dt`` after the write keeps the fix safe."""
    source = HANDED.format(call="(x + 0).to(dt)").replace(
        "        x = self.fc(w) * 2\n", "        dt = w.dtype\n        x = self.fc(w) * 2\n").replace(
        "return x + y", "return (x + y).to(dt)")
    _project(tmp_path, {"model.py": source, "other.py": OTHER})
    at = _line(tmp_path, "model.py", "y *= 3")
    assert [f[3] for f in _findings(tmp_path, ["model.py", "other.py"], "IPF") if f[1] == at] == ["safe"]
