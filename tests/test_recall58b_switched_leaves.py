"""A caller's tensor made to require grad after it was built (``X.requires_grad = True``) is a
leaf that requires grad where it required none before: the helper it is handed cannot write into
it with grad on (issue 24, stop 58: bench/realworld set28 2801, xformers' softmax fallback
``x += mask`` given the test's ``X``).

What requires no grad where it is made (``HandedLeaves.fresh``) now also covers:

- a factory given ``requires_grad=False`` (``torch.normal(0, 1, size=s, requires_grad=False)``);
- ``torch.normal`` of numbers (a mean and std given as tensors may require grad: not that);
- a view, ``.contiguous()`` or conversion of a name bound once to such a tensor, nothing switching
  its grad on or writing a tensor into it between (``X = X.transpose(-2, -1).contiguous()``).

Programs written from scratch; torch runs each. Look-alikes (the tensor computed from one that
requires grad, a mean that is a tensor, the helper run with grad off, no switch) run and stay unproven.
"""

from __future__ import annotations

import pathlib

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.engine.project import build_index
from tests.programs import marked, proven_lines, raises_inplace, run_program

HELPER = """\
import torch


def softmax(x, mask=None):
    return _dispatch(x, log=False, mask=mask)


def _dispatch(x, log, mask=None):
    if mask is not None:
        x += mask  # MARK
    if log:
        return torch.log_softmax(x, dim=-1)
    return torch.softmax(x, dim=-1)
"""

CALLER = """

def main():
    X = torch.normal(0, 1, size=(4, 4), device="cpu", requires_grad=False)
    X = X.transpose(-2, -1).contiguous().transpose(-2, -1)
    X.requires_grad = True
    mask = torch.zeros(4, 4)
    y = softmax(X, mask)
    y.sum().backward()
    return X.grad
"""
PROGRAM = HELPER + CALLER
LEAF = ("a leaf Variable that requires grad", "view of a leaf Variable")

VARIANTS = {
    "normal_of_numbers": PROGRAM.replace('size=(4, 4), device="cpu", requires_grad=False)', "size=(4, 4))")
                                .replace("    X = X.transpose(-2, -1).contiguous().transpose(-2, -1)\n", ""),
    "requires_grad_false": PROGRAM.replace('torch.normal(0, 1, size=(4, 4), device="cpu", requires_grad=False)',
                                           "torch.randn(4, 4, requires_grad=False)")
                                  .replace("    X = X.transpose(-2, -1).contiguous().transpose(-2, -1)\n", ""),
    "views_of_a_factory": PROGRAM.replace('torch.normal(0, 1, size=(4, 4), device="cpu", requires_grad=False)',
                                          "torch.randn(4, 4)"),
}

LOOK_ALIKES = {
    # computed from a tensor that requires grad (PyTorch refuses the switch on a non-leaf, so none):
    # `+=` writes into a non-leaf that nothing saved
    "from_grad": PROGRAM.replace('    X = torch.normal(0, 1, size=(4, 4), device="cpu", requires_grad=False)\n',
                                 "    w = torch.randn(4, 4, requires_grad=True)\n    X = w * 2\n")
                        .replace("    X.requires_grad = True\n", "").replace("return X.grad", "return w.grad"),
    # the mean is a tensor that requires grad: torch.normal's result does too (not a leaf)
    "tensor_mean": PROGRAM.replace('torch.normal(0, 1, size=(4, 4), device="cpu", requires_grad=False)',
                                   "torch.normal(torch.zeros(4, 4, requires_grad=True), 1.0)")
                          .replace("    X.requires_grad = True\n", ""),
    # the helper runs with grad off: PyTorch lets it write into the leaf
    "grad_off": PROGRAM.replace("    y = softmax(X, mask)\n    y.sum().backward()\n",
                                "    with torch.no_grad():\n        y = softmax(X, mask)\n"),
    # the tensor is never made to require grad
    "never_switched": PROGRAM.replace("    X.requires_grad = True\n", "").replace("    y.sum().backward()\n", ""),
}


def _line() -> int:
    (line,) = marked(PROGRAM)
    return line


def test_the_program_and_its_variants_raise_at_the_helper_write():
    assert raises_inplace(PROGRAM, message=LEAF)
    for name, source in VARIANTS.items():
        assert source != PROGRAM, name
        assert raises_inplace(source, message=LEAF), name


def test_the_helper_write_is_proven():
    assert _line() in proven_lines(PROGRAM)


def test_each_variant_is_proven():
    for name, source in VARIANTS.items():
        assert _line() in proven_lines(source), name


def test_look_alikes_run_and_stay_unproven():
    for name, source in LOOK_ALIKES.items():
        assert source != PROGRAM, name
        run_program(source)
        assert _line() not in proven_lines(source), name


def test_the_helper_in_another_file_through_the_index(tmp_path: pathlib.Path):
    """The 2801 layout: the helper module, the caller importing it (through ``import_module``)."""
    helper = tmp_path / "softmax_helpers.py"
    helper.write_text(HELPER)
    case = tmp_path / "case.py"
    case.write_text('import importlib\n\nimport torch\n\nsm = importlib.import_module("softmax_helpers")\n'
                    + CALLER.replace("softmax(X, mask)", "sm.softmax(X, mask)"))
    index = build_index([str(helper), str(case)])
    result = process_source(helper.read_bytes(), str(helper), Settings(), project=index, module_name="softmax_helpers")
    assert result.error is None, result.error
    found = [(f.code, f.status.value if f.status else None) for f in result.findings if f.span.line == _line()]
    assert found and all(status == "manual" for _, status in found), found  # the helper is not rewritten
    # the caller's tensor computed from one that requires grad: nothing proven
    case.write_text(case.read_text().replace(
        '    X = torch.normal(0, 1, size=(4, 4), device="cpu", requires_grad=False)\n',
        "    w = torch.randn(4, 4, requires_grad=True)\n    X = w * 2\n"))
    index = build_index([str(helper), str(case)])
    result = process_source(helper.read_bytes(), str(helper), Settings(), project=index, module_name="softmax_helpers")
    assert result.error is None and not [f for f in result.findings if f.span.line == _line()]
