"""Issue 24, stop 53 (recall): two facts on the way to a write into a refused view or a saved
tensor that the caller hands down.

1. A construction of a class of another file, ``Normal(mu_q, log_sig_q)``, runs
   ``Normal.__init__(obj, mu_q, log_sig_q)``: what it passes reaches ``__init__``'s parameters as an
   instance's call would (``bound``: positions after ``self``), for the question "what autograd
   saved, which refused views, the caller hands" (``ProjectIndex.calls_saving``). Only where the
   construction surely runs that ``__init__``: no ``__new__``, metaclass, class decorator, and
   bases ``object``, ``nn.Module`` or such classes of the file (``Calls.bound_runs``). NVAE's
   ``Normal`` clamping its chunked ``mu`` in place (realworld 2103) is the pattern.
2. ``self.convs[i](x)`` where the class sets ``self.convs`` only to an ``nn.ModuleList`` /
   ``nn.Sequential`` of modules that own parameters, never changed nor frozen: whichever member
   runs, its output requires grad (as ``self.conv(x)``'s does).

Every program is run with torch: the originals raise the in-place error at backward (or at the
write), the look-alikes run and stay unproven.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from tests.test_recall39_callers import _findings, _line, _project  # noqa: E402


def _gradients(tmp_path):
    """What ``model.compute()`` returns, run in a fresh interpreter; None where autograd refuses
    the write (a refused view) or backward finds a saved tensor modified."""
    run = subprocess.run([sys.executable, "-c", "import json, model\n"
                          "try:\n    print(json.dumps(model.compute()))\n"
                          "except RuntimeError as e:\n"
                          "    assert 'modified by an inplace operation' in str(e)"
                          " or 'is being modified inplace' in str(e), e\n    print('null')\n"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)

HELPERS = """\
import torch


def clamp5(x):
    return x.div_(5.).tanh_().mul(5.)


class Normal{bases}:
{extra}    def __init__(self, mu, log_sigma):
        self.mu = clamp5(mu)
        self.sigma = torch.exp(clamp5(log_sigma))
"""

MODEL = """\
import torch
import torch.nn as nn
from helpers import Normal


class Group(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        param0 = self.conv(x)
        mu_q, log_sig_q = torch.chunk(param0, 2, dim=1)
        dist = Normal({passed})
        return dist.mu.sum() + dist.sigma.sum()


def compute():
    torch.manual_seed(0)
    group = Group()
    group(torch.rand(2, 3, 4, 4)).backward()
    return [round(float(v), 5) for v in group.conv.weight.grad.flatten()[:4]]
"""

_NEW = """\
    def __new__(cls, mu, log_sigma):
        return object.__new__(Plain)

"""


def _write(tmp_path, bases: str = "", extra: str = "", passed: str = "mu_q, log_sig_q") -> list:
    _project(tmp_path, {"helpers.py": HELPERS.replace("{bases}", bases).replace("{extra}", extra),
                        "model.py": MODEL.replace("{passed}", passed)})
    at = _line(tmp_path, "helpers.py", "return x.div_(5.).tanh_().mul(5.)")
    return [f for f in _findings(tmp_path, ["model.py", "helpers.py"]) if f[0] == "helpers.py" and f[1] == at
            and f[2].startswith("IPF1")]


@pytest.mark.parametrize("bases", ["", "(object)", "(torch.nn.Module)"], ids=["plain", "object", "module"])
def test_chunk_outputs_handed_to_a_constructor_of_another_file_are_refused_views_there(tmp_path, bases):
    found = _write(tmp_path, bases)
    assert found, _findings(tmp_path, ["model.py", "helpers.py"])
    assert _gradients(tmp_path) is None  # "Output 0 of SplitBackward0 is a view and is being modified inplace"


def test_a_construction_that_may_not_run_the_init_proves_nothing(tmp_path):
    # `__new__` hands back an object of another class: `Normal.__init__` never runs
    extra = "class Plain:\n    pass\n\n\n"
    helpers = HELPERS.replace("{bases}", "").replace("{extra}", _NEW)
    _project(tmp_path, {"helpers.py": extra + helpers, "model.py": MODEL.replace("{passed}", "mu_q, log_sig_q")
                        .replace("return dist.mu.sum() + dist.sigma.sum()", "return param0.sum()")})
    at = _line(tmp_path, "helpers.py", "return x.div_(5.).tanh_().mul(5.)")
    assert not [f for f in _findings(tmp_path, ["model.py", "helpers.py"]) if f[1] == at and f[2].startswith("IPF1")]
    assert _gradients(tmp_path) is not None


def test_copies_handed_to_the_constructor_prove_nothing(tmp_path):
    assert not _write(tmp_path, passed="mu_q.clone(), log_sig_q.clone()")
    assert _gradients(tmp_path) is not None


SAVED_HELPERS = """\
import torch


class Scaled:
    def __init__(self, h, k):
        h.mul_(k)
        self.h = h
"""

SAVED_MODEL = """\
import torch
import torch.nn as nn
from helpers import Scaled


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        out = Scaled({passed}, 2.0)
        return out.h.sum()


def compute():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(3, 4)).backward()
    return [round(float(v), 5) for v in net.fc.weight.grad.flatten()[:4]]
"""


@pytest.mark.parametrize("passed, hazard", [("h", True), ("h.clone()", False)])
def test_a_saved_activation_handed_to_a_constructor_of_another_file(tmp_path, passed, hazard):
    _project(tmp_path, {"helpers.py": SAVED_HELPERS, "model.py": SAVED_MODEL.replace("{passed}", passed)})
    at = _line(tmp_path, "helpers.py", "h.mul_(k)")
    found = [f for f in _findings(tmp_path, ["model.py", "helpers.py"]) if f[1] == at and f[2].startswith("IPF1")]
    assert bool(found) is hazard, found
    assert (_gradients(tmp_path) is None) is hazard  # sigmoid saved its result


LIST_MODEL = """\
import torch
import torch.nn as nn
from helpers import Normal


class Group(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.convs = {container}
{more}
    def forward(self, x, i):
        param0 = self.convs[i](x)
        mu_q, log_sig_q = torch.chunk(param0, 2, dim=1)
        dist = Normal(mu_q, log_sig_q)
        return dist.mu.sum() + dist.sigma.sum() + self.conv(x).sum()


def compute():
    torch.manual_seed(0)
    group = Group()
{outside}    group(torch.rand(2, 3, 4, 4), {i}).backward()
    return [round(float(v), 5) for v in group.conv.weight.grad.flatten()[:4]]
"""


def _list_findings(tmp_path, container: str, more: str = "", i: int = 0, function: bool = False) -> list:
    outside = "    group.convs.append(nn.Identity())\n" if more == "OUTSIDE" else ""
    more = "" if more == "OUTSIDE" else more
    model = LIST_MODEL.replace("{container}", container).replace("{more}", more).replace("{i}", str(i))
    model = model.replace("{outside}", outside)
    if function:  # the chunk handed to a function of the other file (not through a construction)
        model = model.replace("from helpers import Normal", "from helpers import clamp5").replace(
            "dist = Normal(mu_q, log_sig_q)\n        return dist.mu.sum() + dist.sigma.sum()",
            "return clamp5(mu_q).sum() + log_sig_q.sum()")
    _project(tmp_path, {"helpers.py": HELPERS.replace("{bases}", "").replace("{extra}", ""), "model.py": model})
    at = _line(tmp_path, "helpers.py", "return x.div_(5.).tanh_().mul(5.)")
    return [f for f in _findings(tmp_path, ["model.py", "helpers.py"]) if f[0] == "helpers.py" and f[1] == at
            and f[2].startswith("IPF1")]


@pytest.mark.parametrize("container", [
    "nn.ModuleList([nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(3, 8, 1)])",
    "nn.ModuleList([nn.Conv2d(3, 8, 1) for _ in range(3)])",
    "nn.Sequential(nn.Conv2d(3, 8, 1), nn.Linear(4, 4))",
], ids=["list", "comprehension", "sequential"])
@pytest.mark.parametrize("function", [False, True], ids=["constructor", "function"])
def test_a_member_of_a_container_of_parametric_modules_gives_what_requires_grad(tmp_path, container, function):
    assert _list_findings(tmp_path, container, function=function), _findings(tmp_path, ["model.py", "helpers.py"])
    assert _gradients(tmp_path) is None


@pytest.mark.parametrize("container, more, i", [
    # a member without parameters, handed what requires no grad: its chunks require none
    ("nn.ModuleList([nn.Conv2d(3, 8, 1), nn.ReLU()])", "", 1),
    # the list is changed after it is built: its members are not only those built there
    ("nn.ModuleList([nn.Conv2d(3, 8, 1)])", "        self.convs.append(nn.Identity())\n", 1),
    # its members' parameters are switched off
    ("nn.ModuleList([nn.Conv2d(3, 8, 1)])",
     "        for p in self.convs.parameters():\n            p.requires_grad_(False)\n", 0),
    # changed from outside the class (`group.convs.append(nn.Identity())`)
    ("nn.ModuleList([nn.Conv2d(3, 8, 1)])", "OUTSIDE", 1),
], ids=["member-without-parameters", "appended", "frozen", "appended-from-outside"])
def test_containers_that_may_give_what_requires_no_grad_prove_nothing(tmp_path, container, more, i):
    assert not _list_findings(tmp_path, container, more, i)
    assert _gradients(tmp_path) is not None
