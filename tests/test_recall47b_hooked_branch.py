"""Issue 24 recall (recall47b), family B: the output of a frozen module a forward hook makes a
leaf that requires grad (``output.requires_grad_(True)``, as ``enable_input_require_grads``),
bound on one branch only, then written in place.

``if x is None: x = self.tok(ids)`` (the caller may hand its own ``x``) or ``if c: x =
self.tok(ids)`` / ``else: x = self.other(ids)``: wherever the hooked branch runs, the write
raises "a leaf Variable that requires grad is being used in an in-place operation". Before, the
hooked output was proven only where it was the one binding reaching the write. A branch's
binding is now proven where no path from it runs the other binding before the write: the other
sits before the ``if`` in its block (or is the function's parameter), or on the other branch of
one ``if``, and no loop runs it again (or the write follows on every turn). Look-alikes that run
and must not be proven: a loop binding the plain value again on its last turn, the hooked branch
rebinding to a plain value before the write. Programs written from the pattern, run with torch:
the original raises, the fix (out of place, never ``no_grad``) gives an out-of-place control's
gradients.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation"

DECODER = """\
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, vocab=12, d=6, use_tok=True):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.other = nn.Embedding(vocab, d)
        self.mix = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab)
        self.use_tok = use_tok

    def input_embeddings(self):
        return self.tok

    def enable_input_grads(self):
        def make_inputs_require_grad(module, args, output):
            output.requires_grad_(True)

        self.input_embeddings().register_forward_hook(make_inputs_require_grad)

    def forward(self, ids, soft, x=None, extra=None):
BIND
        if extra is not None:
            WRITE
        x = torch.cat([soft.expand(x.size(0), -1, -1), x], 1)
        return self.head(torch.tanh(self.mix(x)))


def main():
    torch.manual_seed(0)
    model = Decoder()
    model.requires_grad_(False)
    model.enable_input_grads()
    soft = nn.Parameter(torch.randn(1, 2, 6))
    ids = torch.tensor([[1, 4, 2], [3, 0, 7]])
    loss = model(ids, soft, extra=soft).logsumexp(-1).mean()
    loss.backward()
    return [loss.detach(), soft.grad]
"""
WRITE = "x[:, 0] = extra[0, 0]"
CONTROL_WRITE = "x = x.clone()\n            x[:, 0] = extra[0, 0]"
BINDS = {
    # the caller may hand its own `x`: the parameter's binding before the `if`
    "parameter-default": "        if x is None:\n            x = self.tok(ids)\n",
    # two branches of one `if`: the other embedding is frozen and hooked by nothing
    "two-branches": "        if self.use_tok:\n            x = self.tok(ids)\n        else:\n            x = self.other(ids)\n",
}


def _program(bind: str, write: str = WRITE) -> str:
    return DECODER.replace("BIND\n", bind).replace("WRITE", write)


def _proven(source: str):
    result = process_in_project(source, Settings())
    line = source[:source.index(WRITE)].count("\n") + 1 if WRITE in source else -1
    return [(f.code, f.status.value) for f in result.findings if f.code.startswith("IPF1") and f.span.line == line]


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.allclose(g, w), (g, w)


def test_hooked_output_bound_when_no_tensor_is_handed_in_is_proven_and_fixed_unsafe():
    """Proven; the fix stays unsafe (``param-mutation``): where the caller hands its own ``x``,
    the write reaches the caller's tensor, which a copy would hide."""
    source = _program(BINDS["parameter-default"])
    assert raises_inplace(source, message=_LEAF)
    assert _proven(source) == [("IPF105", "unsafe")]
    assert fixed_source(source, project=True) == source
    fixed = fixed_source(source, Settings(unsafe_fixes=True), project=True)
    assert "no_grad" not in fixed and fixed != source, fixed
    _same(run_program(fixed), run_program(_program(BINDS["parameter-default"], CONTROL_WRITE)))


def test_hooked_output_on_one_of_two_branches_is_proven():
    source = _program(BINDS["two-branches"])
    assert raises_inplace(source, message=_LEAF)
    assert [code for code, _ in _proven(source)] == ["IPF105"]
    fixed = fixed_source(source, project=True)
    if fixed != source:
        assert "no_grad" not in fixed
        _same(run_program(fixed), run_program(_program(BINDS["two-branches"], CONTROL_WRITE)))


def test_the_other_branch_taken_runs():
    source = _program(BINDS["two-branches"]).replace("model = Decoder()", "model = Decoder(use_tok=False)")
    run_program(source)  # the plain embedding: no leaf, the write is allowed


def test_a_loop_binding_the_plain_value_again_is_not_proven():
    bind = ("        for k in range(2):\n            x = self.other(ids)\n            if k == 0:\n"
            "                x = self.tok(ids)\n")
    source = _program(bind)
    run_program(source)  # the last turn binds the plain embedding's output
    assert _proven(source) == []


def test_a_plain_rebinding_after_the_hooked_one_is_not_proven():
    bind = "        if x is None:\n            x = self.tok(ids)\n        x = self.mix(x)\n"
    source = _program(bind)
    run_program(source)
    assert _proven(source) == []
