"""A helper's write into the tensor it is handed (mutation-as-output), proven through a wrapper that
keeps the model it was built with (issue 24, stop 57: bench/realworld set3 615, yolov5's
``non_max_suppression``; Grad-CAM style ``self.net = net``, ``out = self.net(x)[0]``).

The helper mutates its parameter and returns nothing for it (``x[..., 5:] *= x[..., 4:5]``), so no
rewrite of the helper is right and it stays unfixed (manual); the write breaks backward where a
caller hands it what requires grad. Two facts of the analysis make that seen:

- ``handed_in.constructed_values``: ``self.net`` set only to an ``__init__`` parameter holds what every
  construction of the class passes, where that set is closed (built only by direct calls in the
  file, no subclass or reference, no other file naming the class): a module that owns parameters,
  so ``self.net(x)`` requires grad (unless the file may switch requires_grad off on it);
- ``tensor_kind.piece_kind``: ``f(x)[0]`` of a callee whose every ``return`` is a tuple display has
  the pieces' kind (``return (torch.cat(...),)``: a tensor), so the helper's parameter is a tensor.

Programs written from scratch; torch runs each. Look-alikes (the model frozen, grad off, the class
handed on, a fresh tensor passed, a piece that is no tensor) run, and stay unproven.
"""

from __future__ import annotations

import ast
import pathlib

from codemod.analysis.kinds import Kind
from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.engine.project import build_index
from tests.programs import fixed_source, marked, proven_lines, raises_inplace, run_program

PROGRAM = """\
import torch
import torch.nn as nn


def nms(prediction, conf_thres=0.1):
    output = [None] * prediction.shape[0]
    for xi, x in enumerate(prediction):
        x = x[x[:, 4] > conf_thres]
        x[..., 5:] *= x[..., 4:5]  # MARK
        output[xi] = x
    return output


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(3, 8)

    def forward(self, x):
        p = self.head(x)
        return (torch.cat((p[..., :4], torch.sigmoid(p[..., 4:])), -1),)


class Cam(object):
    def __init__(self, net):
        self.net = net

    def __call__(self, image):
        output = self.net(image)[0]
        kept = nms(output, conf_thres=0.0)[0]
        return kept[:, 4].sum()


def main():
    net = Detector()
    cam = Cam(net)
    score = cam(torch.randn(1, 6, 3))
    score.backward()
    return [p.grad for p in net.parameters()]
"""
WRITE = 9
OUT_OF_PLACE = PROGRAM.replace("        x[..., 5:] *= x[..., 4:5]  # MARK\n",
                               "        x = torch.cat((x[..., :5], x[..., 5:] * x[..., 4:5]), -1)\n")

LOOK_ALIKES = {
    # the model's parameters frozen: nothing the helper is handed requires grad
    "frozen": PROGRAM.replace("    cam = Cam(net)\n", "    net.requires_grad_(False)\n    cam = Cam(net)\n")
                     .replace("    score.backward()\n", "    assert not score.requires_grad\n"),
    # the wrapper runs with grad off
    "grad_off": PROGRAM.replace("    score = cam(torch.randn(1, 6, 3))\n    score.backward()\n",
                                "    with torch.no_grad():\n        score = cam(torch.randn(1, 6, 3))\n"),
    # the wrapper built with a module that owns no parameters, given data
    "no_parameters": PROGRAM.replace("    cam = Cam(net)\n", "    cam = Cam(nn.Identity())\n")
                            .replace("torch.randn(1, 6, 3)", "torch.randn(1, 1, 6, 8)")
                            .replace("    score.backward()\n", "    assert not score.requires_grad\n"),
}


def _proven(source: str) -> set:
    return proven_lines(source)


def test_the_helper_write_raises_and_the_out_of_place_form_runs():
    assert PROGRAM.splitlines()[WRITE - 1].strip().startswith("x[..., 5:] *= x[..., 4:5]")
    assert raises_inplace(PROGRAM)
    assert all(g is not None for g in run_program(OUT_OF_PLACE))


def test_the_write_is_proven_through_the_kept_model():
    assert marked(PROGRAM) == {WRITE}
    assert WRITE in _proven(PROGRAM)


def test_the_helper_is_not_rewritten():
    """Its mutation is its output (a rebinding nobody reads would be a no-op): reported, no fix."""
    result = process_source(PROGRAM.encode(), "case.py", Settings(select=("IPF1",)))
    found = [f for f in result.findings if f.span.line == WRITE]
    assert found and all(f.status is not None and f.status.value == "manual" for f in found)
    assert "x[..., 5:] *= x[..., 4:5]" in fixed_source(PROGRAM, project=True)


def test_look_alikes_run_and_stay_unproven():
    for name, source in LOOK_ALIKES.items():
        assert source != PROGRAM, name
        run_program(source)  # no error: what the helper is handed requires no grad there
        assert WRITE not in _proven(source), name


def test_a_wrapper_class_handed_on_is_not_followed():
    """``build(Cam, net)``: a construction the analysis does not see may pass anything (unknown is
    not yes), though this one raises."""
    source = PROGRAM.replace("    cam = Cam(net)\n", "    cam = build(Cam, net)\n") \
        + "\n\ndef build(kind, net):\n    return kind(net)\n"
    assert raises_inplace(source)
    assert WRITE not in _proven(source)


def test_a_helper_in_another_file_is_proven_through_the_index(tmp_path: pathlib.Path):
    """The helper in its own module, the wrapper in another (as set3 615 and yolov5 are laid out)."""
    helper = tmp_path / "boxes.py"
    helper.write_text("import torch\n\n\n" + PROGRAM[PROGRAM.index("def nms"):PROGRAM.index("class Detector")])
    main = tmp_path / "cam.py"
    main.write_text(PROGRAM[:PROGRAM.index("def nms")] + "from boxes import nms\n\n\n"
                    + PROGRAM[PROGRAM.index("class Detector"):])
    index = build_index([str(helper), str(main)])
    result = process_source(helper.read_bytes(), str(helper), Settings(), project=index, module_name="boxes")
    assert result.error is None, result.error
    line = next(i for i, text in enumerate(helper.read_text().splitlines(), 1) if text.endswith("# MARK"))
    assert [(f.code, f.status.value if f.status else None) for f in result.findings if f.span.line == line] \
        == [("IPF104", "manual")]
    # a fresh tensor handed instead: nothing proven
    main.write_text(main.read_text().replace("output = self.net(image)[0]", "output = torch.rand(1, 6, 8)"))
    index = build_index([str(helper), str(main)])
    result = process_source(helper.read_bytes(), str(helper), Settings(), project=index, module_name="boxes")
    assert result.error is None and not [f for f in result.findings if f.span.line == line]


PIECES = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        if x.shape[0] > 1:
            return h, h.mean()
        return (h * 2, None)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        a = self.block(x)[0]
        b = self.block(x)[1]
        c = self.block(x)[2]
        d = pair(x)[1]
        return a, b, c, d


def pair(x):
    return torch.exp(x), torch.sum(x)


def shadowed(x, pair):
    e = pair(x)[0]
    return e
"""


def _kind_of(source: str, name: str) -> Kind:
    model = SemanticModel(Source(source.encode()))
    found = [n.value for n in ast.walk(model.module) if isinstance(n, ast.Assign)
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
    return model.kind(found[0])


def test_a_piece_of_returned_tuples_has_the_pieces_kind():
    assert _kind_of(PIECES, "a") is Kind.TENSOR  # `h` and `h * 2`
    assert _kind_of(PIECES, "b") is Kind.UNKNOWN  # `h.mean()` and `None`: not a tensor on every path
    assert _kind_of(PIECES, "c") is Kind.UNKNOWN  # no third piece
    assert _kind_of(PIECES, "d") is Kind.TENSOR  # the module's `def pair`
    assert _kind_of(PIECES, "e") is Kind.UNKNOWN  # a parameter named `pair`: not the module's function


# The wrapper's `__call__` reached only through an instance called with grad off: it runs with grad
# off (``calls.instance_sites``), in a file checked alone and with the index alike. Before, only
# calls by name counted: a model built in `__init__` (`self.net = Detector()`, returning a tensor)
# made the helper's write proven though the program runs.
GRAD_OFF_ONLY = LOOK_ALIKES["grad_off"].replace(
    "    def __init__(self, net):\n        self.net = net\n", "    def __init__(self, net):\n        self.net = Detector()\n"
).replace("        return (torch.cat((p[..., :4], torch.sigmoid(p[..., 4:])), -1),)\n",
          "        return torch.cat((p[..., :4], torch.sigmoid(p[..., 4:])), -1)\n"
          ).replace("output = self.net(image)[0]", "output = self.net(image)")


def test_a_wrapper_run_only_with_grad_off_is_not_proven():
    assert GRAD_OFF_ONLY != LOOK_ALIKES["grad_off"]
    run_program(GRAD_OFF_ONLY)
    assert WRITE not in _proven(GRAD_OFF_ONLY)
    alone = process_source(GRAD_OFF_ONLY.encode(), "case.py", Settings())
    assert alone.error is None and not [f for f in alone.findings if f.span.line == WRITE]
    # the same wrapper run with grad on: proven, both ways
    graded = GRAD_OFF_ONLY.replace("    with torch.no_grad():\n        score = cam(torch.randn(1, 6, 3))\n",
                                   "    score = cam(torch.randn(1, 6, 3))\n    score.backward()\n")
    assert raises_inplace(graded) and WRITE in _proven(graded)
    alone = process_source(graded.encode(), "case.py", Settings())
    assert [f.code for f in alone.findings if f.span.line == WRITE] == ["IPF104"]


def test_an_instance_handed_on_keeps_the_wrapper_with_grad_on():
    """``later(cam)`` calls the instance where the file's instance calls do not show: the one call
    seen under ``no_grad`` says nothing of ``__call__``'s grad mode."""
    source = GRAD_OFF_ONLY.replace("        score = cam(torch.randn(1, 6, 3))\n",
                                   "        score = cam(torch.randn(1, 6, 3))\n    later(cam).backward()\n") \
        + "\n\ndef later(c):\n    return c(torch.randn(1, 6, 3))\n"
    assert raises_inplace(source)
    assert WRITE in _proven(source)
    alone = process_source(source.encode(), "case.py", Settings())
    assert [f.code for f in alone.findings if f.span.line == WRITE] == ["IPF104"]


def test_a_function_no_call_reaches_is_asked_its_grad_mode_without_error():
    """A module-level function of an indexed run that nothing calls: grad mode through instances
    is a question of a class's ``__call__``/``forward`` only (fresh56's bte-pytorch, an internal
    error at stop 57 before this)."""
    source = ("import torch\n\n\ndef seq(n, x):\n    y = torch.zeros((n + 1,) + x.shape)\n"
              "    for j in range(1, n + 1):\n        y[j] = x * y[j - 1]\n    return y\n")
    from tests.programs import process_in_project

    result = process_in_project(source, Settings(select=("ALL",)))
    assert [f.span.line for f in result.findings] == [7]
