"""Values through wrappers (issue 24, stop 41): what a call hands back when it is written
through something that is not the function itself.

- ``torch.jit._unwrap_optional(h)`` and ``torch.jit.annotate(T, h)`` *are* ``h``
  (``torch_api.IDENTITY_FUNCTIONS``, measured from torch: the call returns the object it was
  given), as is ``typing.cast(T, h)``: the result has ``h``'s kind, grad and view origin, and
  the op that made ``h``.
- ``C.f(x)`` / ``self.f(x)`` where the class body binds ``f = staticmethod(g)`` runs the module's
  ``g`` (``Classes.static_function``), where nothing can rebind it (no ``x.f = ...``, no subclass).
- ``q, k = map(lambda t: <views of t>, x.chunk(2, -1))`` (or a comprehension over the parts):
  each item is a view of an output of the multi-view call, refused in place as they are.

Each program is new (no corpus case): each original dies in backward, the default fix's
gradients equal the hand-written out-of-place program's, and each look-alike stays silent.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from tests.programs import changed_by_fix, process_in_project, raises_inplace, run_program


def _proven(source: str) -> list:
    return [f for f in process_in_project(source, Settings()).findings if f.code.startswith("IPF1")]


def _fixed_matches(source: str, reference: str) -> None:
    """The program dies in backward; the default fix does not, and its gradients equal the
    out-of-place program's."""
    assert raises_inplace(source, message=("modified by an inplace operation", "is a view and is being modified inplace"))
    fixed = changed_by_fix(source)
    got, want = run_program(fixed), run_program(reference)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.allclose(g, w), fixed


UNWRAP_VIEW = textwrap.dedent("""\
    from typing import Optional

    import torch
    import torch.nn as nn


    class Cells(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(3, 3)

        def forward(self, x, state: Optional[torch.Tensor] = None):
            h = torch.jit._unwrap_optional(state)
            first, second = h.unbind(0)
            {write}
            return self.cell(x, first) + second


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.init = nn.Linear(2, 6)
            self.cells = Cells()

        def forward(self, x, ctx):
            return self.cells(x, self.init(ctx).view(2, 2, 3).transpose(0, 1).contiguous().transpose(0, 1))


    def main():
        net = Net()
        out = net(torch.randn(2, 3), torch.randn(2, 2)).sum()
        out.backward()
        return [p.grad for p in net.parameters()]
""")


def test_unwrap_optional_is_its_argument_for_views():
    source = UNWRAP_VIEW.replace("{write}", "first.mul_(0.5)")
    codes = [f.code for f in _proven(source)]
    assert "IPF106" in codes, codes
    _fixed_matches(source, UNWRAP_VIEW.replace("{write}", "first = first.mul(0.5)"))


def test_unwrap_optional_of_a_fresh_tensor_stays_silent():
    source = UNWRAP_VIEW.replace("{write}", "first.mul_(0.5)").replace(
        "h = torch.jit._unwrap_optional(state)", "h = torch.jit._unwrap_optional(torch.zeros(2, 2, 3))")
    assert not raises_inplace(source, message="is a view")
    assert _proven(source) == []


UNWRAP_SAVED = textwrap.dedent("""\
    import typing

    import torch
    import torch.nn as nn


    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            g = {made}
            g.add_(1.0)
            return g * x


    def main():
        m = Gate()
        out = m(torch.randn(2, 4)).sum()
        out.backward()
        return [p.grad for p in m.parameters()]
""")


@pytest.mark.parametrize("made", ["torch.jit._unwrap_optional(torch.sigmoid(self.fc(x)))",
                                  "torch.jit.annotate(torch.Tensor, torch.sigmoid(self.fc(x)))",
                                  "typing.cast(torch.Tensor, torch.sigmoid(self.fc(x)))"])
def test_identity_helpers_keep_the_op_that_made_the_value(made):
    source = UNWRAP_SAVED.replace("{made}", made)
    codes = [f.code for f in _proven(source)]
    assert "IPF103" in codes, codes
    _fixed_matches(source, UNWRAP_SAVED.replace("{made}", made).replace("g.add_(1.0)", "g = g.add(1.0)"))


@pytest.mark.parametrize("made", ["torch.jit._unwrap_optional(self.fc(x) * 2)", "typing.cast(torch.Tensor, self.fc(x) * 2)"])
def test_identity_helper_of_an_op_saving_nothing_stays_silent(made):
    source = UNWRAP_SAVED.replace("{made}", made)
    assert not raises_inplace(source)
    assert _proven(source) == []


STATIC = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def _squash(v):
        return {body}


    class ops:
        squash = staticmethod(_squash)


    class Head(nn.Module):
        squash = staticmethod(_squash)

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = {call}(self.fc(x))
            h.mul_(0.5)
            return h
    {extra}

    def main():
        m = Head()
        out = m(torch.randn(3, 4)).pow(2).sum()
        out.backward()
        return [p.grad for p in m.parameters()]
""")


def _static(body: str = "torch.tanh(v)", call: str = "ops.squash", extra: str = "") -> str:
    return STATIC.replace("{body}", body).replace("{call}", call).replace("{extra}", extra)


@pytest.mark.parametrize("call", ["ops.squash", "self.squash", "Head.squash"])
def test_staticmethod_class_attribute_runs_the_module_function(call):
    source = _static(call=call)
    codes = [f.code for f in _proven(source)]
    assert "IPF103" in codes, codes
    _fixed_matches(source, _static(call=call).replace("h.mul_(0.5)", "h = h.mul(0.5)"))


def test_staticmethod_of_a_function_saving_nothing_stays_silent():
    source = _static(body="v * 2")
    assert not raises_inplace(source)
    assert _proven(source) == []


SUBCLASS = """
class Other(Head):
    squash = staticmethod(torch.relu)
"""


@pytest.mark.parametrize("call, extra", [
    ("self.squash", SUBCLASS),  # a subclass binds it otherwise: `self.squash` may run that
    ("ops.squash", "\nops.squash = staticmethod(torch.sin)\n"),  # rebound after the class: unknown
])
def test_static_attribute_that_may_be_rebound_is_not_followed(call, extra):
    source = _static(call=call, extra=extra)
    assert _proven(source) == []


def test_plain_function_class_attribute_through_self_is_a_bound_method():
    # `squash = _squash` read through an instance passes `self`: not the module function's call
    source = _static(call="self.squash").replace("    squash = staticmethod(_squash)\n\n    def __init__",
                                                 "    squash = _squash\n\n    def __init__")
    assert _proven(source) == []


MAPPED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Attention(nn.Module):
        def __init__(self, dim=8, heads=2):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(dim, dim * 3)

        def forward(self, x):
            b, n, d = x.shape
            q, k, v = {split}
            {write}
            attn = (q @ k.transpose(-1, -2)).softmax(-1)
            return attn @ v


    def main():
        m = Attention()
        out = m(torch.randn(2, 3, 8)).sum()
        out.backward()
        return [p.grad for p in m.parameters()]
""")
HEADS = "t.view(b, n, self.heads, d // self.heads).transpose(1, 2)"


@pytest.mark.parametrize("split", [
    f"map(lambda t: {HEADS}, self.qkv(x).chunk(3, dim=-1))",
    f"[{HEADS} for t in self.qkv(x).chunk(3, dim=-1)]",
    f"({HEADS} for t in torch.split(self.qkv(x), 8, dim=-1))",
])
def test_views_of_multi_view_outputs_through_map_and_comprehensions(split):
    source = MAPPED.replace("{split}", split).replace("{write}", "q *= 0.5")
    codes = [f.code for f in _proven(source)]
    assert "IPF106" in codes, codes
    _fixed_matches(source, MAPPED.replace("{split}", split).replace("{write}", "q = q * 0.5"))


@pytest.mark.parametrize("split", [
    "map(lambda t: t.clone(), self.qkv(x).chunk(3, dim=-1))",  # copies: no view
    "map(lambda t: t * 2, self.qkv(x).chunk(3, dim=-1))",
    f"map(lambda t: {HEADS}, torch.zeros(2, 3, 24).chunk(3, dim=-1))",  # nothing requires grad
    "map(lambda t: t.contiguous(), self.qkv(x).chunk(3, dim=-1))",  # may copy: never proven
])
def test_mapped_look_alikes_stay_silent(split):
    source = MAPPED.replace("{split}", split).replace("{write}", "q *= 0.5")
    assert _proven(source) == []


PARTIAL = textwrap.dedent("""\
    import functools
    from functools import partial

    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.key = nn.Linear(4, 4)
            self.norm = {bound}

        def forward(self, q, x):
            w = self.norm(q @ self.key(x).t())
            w.mul_(2.0)
            return w @ x


    def main():
        m = Scorer()
        out = m(torch.randn(2, 4), torch.randn(3, 4)).sum()
        out.backward()
        return [p.grad for p in m.parameters()]
""")


@pytest.mark.parametrize("bound", ["functools.partial(torch.softmax, dim=-1)",
                                   "partial(F.log_softmax, dim=-1)", "partial(torch.sigmoid)"])
def test_partial_of_a_torch_function_saving_its_output(bound):
    source = PARTIAL.replace("{bound}", bound)
    codes = [f.code for f in _proven(source)]
    assert "IPF103" in codes, codes
    _fixed_matches(source, source.replace("w.mul_(2.0)", "w = w.mul(2.0)"))


def test_partial_in_a_local_name():
    source = PARTIAL.replace("{bound}", "None").replace(
        "        w = self.norm(", "        norm = partial(torch.softmax, dim=-1)\n        w = norm(")
    codes = [f.code for f in _proven(source)]
    assert "IPF103" in codes, codes


@pytest.mark.parametrize("bound, extra", [
    ("partial(F.leaky_relu, negative_slope=0.2)", ""),  # saves its input, not its output: the write is fine
    ("partial(torch.softmax, dim=-1)", "\n    def reset(self):\n        self.norm = torch.relu\n"),  # set twice
])
def test_partial_look_alikes_stay_silent(bound, extra):
    source = PARTIAL.replace("{bound}", bound).replace("        return w @ x\n", "        return w @ x\n" + extra)
    assert extra in source
    if not extra:
        assert not raises_inplace(source)
    assert _proven(source) == []


HALVES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def halves(t):
        c = t.size(1)
        return {returned}


    class Coupling(nn.Module):
        def __init__(self):
            super().__init__()
            self.pre = nn.Conv2d(4, 4, 1)
            self.net = nn.Conv2d(2, 2, 3, padding=1)

        def forward(self, x):
            z = self.pre(x)
            z1, z2 = halves(z)
            {shift}
            return torch.cat([z1, z2], 1)


    def main():
        m = Coupling()
        out = m(torch.randn(1, 4, 5, 5)).pow(2).sum()
        out.backward()
        return [p.grad for p in m.parameters()]
""")
SLICED = "t[:, : c // 2], t[:, c // 2:]"


def _halves(returned: str = SLICED, shift: str = "z2 += self.net(z1)") -> str:
    return HALVES.replace("{returned}", returned).replace("{shift}", shift)


@pytest.mark.parametrize("returned", [SLICED, "t[:, 0::2, ...], t[:, 1::2, ...]"])
def test_slices_returned_by_a_helper_share_one_version_counter(returned):
    source = _halves(returned)
    codes = [f.code for f in _proven(source)]
    assert "IPF101" in codes, codes
    _fixed_matches(source, _halves(returned, "z2 = z2 + self.net(z1)"))


@pytest.mark.parametrize("returned, shift", [
    ("t[:, : c // 2].clone(), t[:, c // 2:]", "z2 += self.net(z1)"),  # a copy: its own counter
    (SLICED, "z2 += z1 * 2"),  # nothing saved z1 (a product by a number saves no tensor)
])
def test_slices_look_alikes_stay_silent(returned, shift):
    source = _halves(returned, shift)
    assert not raises_inplace(source)
    assert _proven(source) == []


def test_slices_of_a_tensor_read_afterwards_are_not_fixed_safely():
    # `z` is read after the write: `z2 = z2 + ...` would leave `z` as it was
    source = _halves().replace("return torch.cat([z1, z2], 1)", "return z")
    assert raises_inplace(source)
    assert "IPF101" in [f.code for f in _proven(source)]
    result = process_in_project(source, Settings(), fix=True)
    assert "z2 += self.net(z1)" in (result.fixed if result.changed else source)


def test_slices_returned_by_a_helper_of_another_file(tmp_path):
    """The helper's summary crosses files through the project index: ``z2`` is a tensor there
    (a slice of the tensor passed), its write proven (the fix is left to the user: the tensor
    kind comes from another file's summary)."""
    from tests.test_recall39_callers import _findings, _gradients, _project

    _project(tmp_path, {
        "thops.py": """\
            def halves(t):
                c = t.size(1)
                return t[:, : c // 2], t[:, c // 2:]
        """,
        "model.py": """\
            import torch
            import torch.nn as nn

            from thops import halves


            def compute():
                torch.manual_seed(0)
                pre, net = nn.Conv2d(4, 4, 1), nn.Conv2d(2, 2, 3, padding=1)
                z = pre(torch.randn(1, 4, 5, 5))
                z1, z2 = halves(z)
                z2 += net(z1)
                torch.cat([z1, z2], 1).pow(2).sum().backward()
                return pre.weight.grad.sum().item()
        """,
    })
    assert _gradients(tmp_path) is None  # dies in backward
    found = [f for f in _findings(tmp_path, ["model.py", "thops.py"]) if f[2].startswith("IPF1")]
    assert [(f[0], f[1], f[2]) for f in found] == [("model.py", 12, "IPF101")], found
