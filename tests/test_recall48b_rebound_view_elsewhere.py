"""Recall (recall48b), family B across files: a library module's function rebinds its parameter
to a view of itself (``x, t = x[:, :1], x[:, 1:]`` of a feature transform, ``x = as_batch(x)``
of a batch adjuster handing back its argument or ``t.unsqueeze(0)``) and writes the name in
place; the caller, in another file of the run, hands it a leaf that requires grad. The caller's
own analysis records the leaf (``CallFact.args_saved``); the library's analysis now follows the
rebound name back to the parameter. A caller handing a tensor that needs no grad (a metric on
data) proves nothing. Programs written from the pattern, run with torch in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.test_recall39_callers import _findings, _line, _project

HELPERS = """\
import torch


def as_batch(t):
    if t.dim() == 3:
        t = t.unsqueeze(0)
    return t


def normalise(x, data_range=255.0):
    x = as_batch(x)
    x /= data_range
    return x.mean()


def periodic(x):
    x, t = x[:, :1], x[:, 1:]
    x *= 3.0
    return torch.cat([torch.sin(x), t], 1)
"""

MODEL = """\
import torch

from helpers import normalise, periodic


def compute():
    image = torch.rand(3, 4, 4{grad})
    points = torch.rand(5, 2{grad})
    out = normalise(image) + periodic(points).sum()
    {finish}
"""
WITH_GRAD = MODEL.format(grad=", requires_grad=True", finish="out.backward()\n    return [image.grad.tolist()]")
WITHOUT = MODEL.format(grad="", finish="return [out.item()]")


def _runs(tmp_path) -> str:
    run = subprocess.run([sys.executable, "-c", "import json, model\ntry:\n    model.compute()\n    print('ok')\n"
                          "except RuntimeError as e:\n    print(json.dumps(str(e)))\n"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def _proven(tmp_path, text: str) -> list:
    return [f[2] for f in _findings(tmp_path, ["model.py", "helpers.py"], select="IPF1")
            if f[0] == "helpers.py" and f[1] == _line(tmp_path, "helpers.py", text)]


def test_library_writes_into_a_rebound_parameter_the_caller_hands_a_leaf(tmp_path):
    _project(tmp_path, {"helpers.py": HELPERS, "model.py": WITH_GRAD})
    assert "leaf Variable that requires grad" in _runs(tmp_path)
    assert _proven(tmp_path, "x /= data_range") == ["IPF101"]
    assert _proven(tmp_path, "x *= 3.0") == ["IPF101"]


def test_library_handed_tensors_without_grad_proves_nothing(tmp_path):
    _project(tmp_path, {"helpers.py": HELPERS, "model.py": WITHOUT})
    assert _runs(tmp_path) == "ok"
    assert _proven(tmp_path, "x /= data_range") == []
    assert _proven(tmp_path, "x *= 3.0") == []
