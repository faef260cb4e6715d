"""Family B: a function writes in place into the parameter its caller hands a leaf that requires
grad (an init helper such as e2cnn's ``generalized_he_init(tensor, ...)``: ``tensor[:] = vars *
torch.randn_like(tensor)``; a ``slice_update(inputs, ...)``), called with a parameter of a module
the caller builds (``conv.weights`` of ``conv = R2Conv(...)``, an ``nn.Parameter`` attribute)
from a function nothing in the file calls (an entry point, ``main()``/``compute()``, run as
module-level code is: with grad on). The helper in the same file (IPF005 at the write, every call
a known leaf) and in another file of the run (the caller's analysis records the leaf it passes,
``CallFact.args_saved``; the write is proven at the helper). Probes written from the public
pattern, not copied from a corpus case; the originals raise "a leaf Variable that requires grad
is being used in an in-place operation"; look-alikes that run stay unflagged."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation"

INIT = """\
import torch


def he_init(tensor, fan_in):
    tensor[:] = torch.randn_like(tensor) * (2.0 / fan_in) ** 0.5
"""

MODEL = """\
import torch
import torch.nn as nn
{imports}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(4, 3))

    def forward(self, x):
        return x @ self.w


def build():
    net = Net()
    {call}
    return net


def compute():
    torch.manual_seed(0)
    net = build()
    net(torch.randn(2, 4)).sum().backward()
    return [net.w.grad.tolist()]
"""

CALLS = {
    "param-attribute": "he_init(net.w, 3)",
}
CONTROLS = {
    "under-no-grad": "with torch.no_grad():\n        he_init(net.w, 3)",
    "through-data": "he_init(net.w.data, 3)",
    "a-copy": "he_init(net.w.detach().clone(), 3)",
}


def _write(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))


def _proven(tmp_path, names):
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--output-format", "json", *names],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    return sorted((f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"])
                  for f in json.loads(run.stdout)["findings"])


def _raises(tmp_path, module="model"):
    run = subprocess.run([sys.executable, "-c", f"import {module}\ntry:\n    {module}.compute()\n"
                          "except RuntimeError as e:\n    print(str(e))\n"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return _LEAF in run.stdout


def _cross(call):
    return {"initlib.py": INIT, "model.py": MODEL.format(imports="from initlib import he_init", call=call)}


def _same(call):
    return {"model.py": MODEL.format(imports=INIT.replace("import torch\n", ""), call=call)}


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_another_file_handing_the_helper_a_parameter_is_proven_at_the_write(tmp_path, call):
    _write(tmp_path, _cross(call))
    assert _raises(tmp_path)
    assert _proven(tmp_path, ["model.py", "initlib.py"]) == [("initlib.py", 5, "IPF104")]


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_the_same_file_handing_the_helper_a_parameter_is_proven_at_the_write(tmp_path, call):
    _write(tmp_path, _same(call))
    assert _raises(tmp_path)
    found = _proven(tmp_path, ["model.py"])
    assert [f[2] for f in found] == ["IPF105"] and found[0][1] == [
        i + 1 for i, s in enumerate((tmp_path / "model.py").read_text().splitlines()) if "tensor[:] =" in s][0], found


@pytest.mark.parametrize("call", list(CONTROLS.values()), ids=list(CONTROLS))
@pytest.mark.parametrize("layout", ["cross", "same"])
def test_look_alikes_that_run_stay_unflagged(tmp_path, call, layout):
    files = _cross(call) if layout == "cross" else _same(call)
    _write(tmp_path, files)
    assert not _raises(tmp_path)
    assert _proven(tmp_path, sorted(files)) == []


def test_a_function_called_elsewhere_in_the_file_is_no_entry_point(tmp_path):
    """``build()`` called only under ``no_grad`` by the file: its call runs with grad off (no proof)."""
    files = _cross("he_init(net.w, 3)")
    files["model.py"] = files["model.py"].replace("    net = build()\n", "    with torch.no_grad():\n        net = build()\n")
    _write(tmp_path, files)
    assert not _raises(tmp_path)
    assert _proven(tmp_path, ["model.py", "initlib.py"]) == []
