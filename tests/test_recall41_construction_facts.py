"""Family A: what an instance is built with, followed through two everyday spellings (issue 24, stop 41).

``self.conv_cfg, self.act_cfg = None, act_cfg`` gives each attribute its own element
(``classes.paired``): a block built with ``act_cfg=self.act_cfg`` then has its activation, and a
``+=`` into its output is proven. A list of outputs built by a comprehension and then
``outs.append(...)`` holds the appended value too: a write at an index is proven where every
element is saved, possible where one is not. Each program is new (no corpus case); each original
dies in backward where the fact is proven, and each look-alike runs.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

HEAD = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class ConvAct(nn.Module):
        def __init__(self, c, act_cfg=dict(type="ReLU")):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 3, padding=1)
            self.act = nn.ReLU() if act_cfg is not None else None

        def forward(self, x):
            x = self.conv(x)
            if self.act is not None:
                x = self.act(x)
            return x


    class Head(nn.Module):
        def __init__(self, c, act_cfg=dict(type="ReLU")):
            super().__init__()
            {attrs}
            self.block = ConvAct(c, act_cfg=self.act_cfg)

        def make(self, c):
            return c, None

        def forward(self, x):
            y = self.block(x)
            y += x
            return y


    def main():
        torch.manual_seed(0)
        head = Head(3)
        head(torch.randn(2, 3, 5, 5)).sum().backward()
        return [p.grad for p in head.parameters()]
""")


def _proven(source: str) -> list:
    return [f for f in process_in_project(source, Settings()).findings if f.code.startswith("IPF1")]


def _same_gradients(source: str, fixed: str, out_of_place: str) -> None:
    got, want = run_program(fixed), run_program(out_of_place)
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


def test_attributes_set_by_one_tuple_assignment_each_hold_their_element():
    source = HEAD.replace("{attrs}", "self.c, self.act_cfg = c, act_cfg")
    assert raises_inplace(source)  # the block's ReLU saved its result; `y += x` wrote into it
    found = _proven(source)
    write = source.splitlines().index("        y += x") + 1
    assert [(f.code, f.span.line) for f in found] == [("IPF101", write)], found
    fixed = fixed_source(source, Settings(unsafe_fixes=True), project=True)
    assert "y = y + x" in fixed
    _same_gradients(source, fixed, source.replace("y += x", "y = y + x"))


@pytest.mark.parametrize("attrs", [
    "self.c, self.act_cfg = c, None",  # the element is None: the block has no activation
    "self.c, self.act_cfg = self.make(c)",  # unpacked from a call: not known
    "self.c, *self.rest = c, None, 1\n        self.act_cfg = None",  # a starred target pairs nothing
], ids=["none", "from-a-call", "starred"])
def test_a_tuple_assignment_proves_nothing_it_does_not_show(attrs):
    source = HEAD.replace("{attrs}", attrs)
    run_program(source)  # it runs: the block ends with its convolution
    assert _proven(source) == []


NECK = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Neck(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.lats = nn.ModuleList([nn.Conv2d(c, c, 1) for _ in range(2)])
            self.top = nn.Conv2d(c, c, 1)

        def forward(self, feats):
            outs = [{each} for lat, f in zip(self.lats, feats)]
            outs.append({top})
            for i in range(len(outs) - 1, 0, -1):
                outs[i - 1] += 0.5 * outs[i]
            return sum(o.sum() for o in outs)


    def main():
        torch.manual_seed(0)
        neck = Neck(3)
        feats = [torch.randn(2, 3, 4, 4) for _ in range(3)]
        neck(feats).backward()
        return [p.grad for p in neck.parameters()]
""")


def test_an_element_appended_to_a_built_list_is_one_of_its_elements():
    source = NECK.replace("{each}", "torch.sigmoid(lat(f))").replace("{top}", "torch.tanh(self.top(feats[-1]))")
    assert raises_inplace(source)
    found = _proven(source)
    write = source.splitlines().index("            outs[i - 1] += 0.5 * outs[i]") + 1
    assert [(f.code, f.span.line) for f in found] == [("IPF101", write)], found
    fixed = fixed_source(source, project=True)
    assert "outs[i - 1] = outs[i - 1] + 0.5 * outs[i]" in fixed
    _same_gradients(source, fixed, source.replace("outs[i - 1] += 0.5 * outs[i]", "outs[i - 1] = outs[i - 1] + 0.5 * outs[i]"))


def test_a_list_whose_written_elements_are_unsaved_is_no_proof():
    """The comprehension's elements are convolution outputs (nothing saved them); only the
    appended one, never written, is a sigmoid's result."""
    source = NECK.replace("{each}", "lat(f)").replace("{top}", "torch.sigmoid(self.top(feats[-1]))")
    run_program(source)  # it runs
    assert _proven(source) == []


def test_an_element_a_name_still_holds_gets_no_safe_fix():
    """``outs.append(top)`` (or ``outs = [a, top]``) and ``top`` read again: the in-place write
    changes what ``top`` holds, a rebound slot would not, so the rewrite is unsafe (a working
    program, grad off, keeps its results under the fix of every rule's safe tier)."""
    for build in ("outs = [x + i for i in range(2)]\n    outs.append(top)", "outs = [x + 1, top]"):
        source = textwrap.dedent("""\
            import torch


            def main():
                x = torch.randn(3)
                top = x * 2
                {build}
                for i in range(len(outs)):
                    outs[i] += 1
                return [top, *outs]
        """).replace("{build}", build)
        fixed = fixed_source(source, Settings(select=("IPF",)), project=True)
        got, want = run_program(fixed), run_program(source)
        assert all(torch.equal(g, w) for g, w in zip(got, want)), fixed
