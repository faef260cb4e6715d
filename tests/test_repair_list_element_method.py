"""``repair`` of an in-place tensor method on an element of a Python list (spikingjelly's
``MultiStepContainer``: ``for t in ...: y_seq[t].unsqueeze_(0)`` on the step outputs, commit
8b4305f2 "do not use inplace operation"; the maintainers wrote ``y_seq[t] = y_seq[t].unsqueeze(0)``).

Found at stop 50 (dev case set25/2501, on a CPU and on an H200): the run-made candidates were a
clone at the save site and ``y_seq = y_seq.clone()`` (a list has no ``clone``), never the method
out of place with the element rebound, which the run-made rewrite does for ``x[i] += v`` already.
On a list the element's rebinding is the out-of-place fix; on a tensor ``y[t] = y[t].op()`` is a
write again and the verification refuses it (the next candidate is taken).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402

LIST = '''\
import torch


def steps(w, n=3):
    ys = []
    for t in range(n):
        h = (w * (t + 1)).tanh_()  # saves its result, the element written below (no clone at a save in place)
        ys.append(h)
    for t in range(len(ys)):
        ys[t].unsqueeze_(0)
    return torch.cat(ys, 0)


def compute():
    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    out = steps(w)
    (out * torch.arange(12.).reshape(3, 4)).sum().backward()
    return {"out": out.detach(), "w": w.grad}
'''
FIXED = LIST.replace("        ys[t].unsqueeze_(0)", "        ys[t] = ys[t].unsqueeze(0)")


def _run(text, tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    namespace = {}
    exec(compile(text, str(path), "exec"), namespace)
    return namespace["compute"]()


def test_the_list_program_raises_and_the_maintainers_fix_runs(tmp_path):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _run(LIST, tmp_path, "orig")
    assert _run(FIXED, tmp_path, "fixed")["w"] is not None


def test_an_inplace_method_on_a_list_element_is_rebound_out_of_place(tmp_path):
    path = tmp_path / "steps.py"
    path.write_text(LIST)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert result.repaired == FIXED, result.repaired
    want, got = _run(FIXED, tmp_path, "want"), _run(result.repaired, tmp_path, "got")
    assert torch.equal(want["out"], got["out"]) and torch.equal(want["w"], got["w"])
