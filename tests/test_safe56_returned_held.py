"""Stop 56 (safe56): what a call of the project's code returns, and who else holds it.

`y = self.block(x); y *= 2` is rewritten `y = y * 2` (safe tier) only where nothing but `y` holds
the tensor the block returned. Three groups:

- Holes closed (`kept._returned`): a callee that returns a name bound from an attribute
  (`out = self.last; return out`), the result of another function of the file that keeps it
  (`return grab(x)`, `grab` storing it in a global), or an element of what an object holds
  (`a, b = self.pair; return a`) hands back a tensor someone else holds: the fix stays unsafe
  (`held-elsewhere`), and the rewrite would indeed leave the holder without the write.
- An element of a call's fresh result (`kept.container_fresh`): `y = self.head(x)[0]`, where
  `head` builds a new list of torch layers' outputs and keeps none of it, takes its tensor from a
  list nobody else holds: safe (AdaCLIP, realworld set4/422). Where the list holds the caller's
  tensor, an attribute, or is itself kept, the fix stays unsafe.
- A method only tensors have besides a plain class of the file (`x.reciprocal()`, a funsor
  `Tensor` class defining `reciprocal` too: realworld set26/2601): on a tensor the result is new;
  on the class's instance the method returns a new instance of a plain class, never a tensor:
  safe. Where the class's method hands back a tensor it holds, unsafe.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, run_program


def _verdicts(source: str, write: str) -> list:
    line = source.splitlines().index(write.rstrip("\n")) + 1
    return [(f.status.value if f.status else None, f.reason)
            for f in process_in_project(source, Settings()).findings if f.span.line == line]


def _kept_after_forward(source: str) -> list:
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    return space["main"](backward=False)


# ---- holes closed: the callee hands back what something else holds ---------------------------

KEEPER = """\
import torch
import torch.nn as nn

CACHE = {}


def grab(x):
    t = torch.sigmoid(x)
    CACHE["t"] = t
    return t


class Keeper(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.last = None
        self.pair = None

    def forward(self, x):
        BODY


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Keeper()

    def forward(self, x):
        y = self.block(x)
        z = y.pow(2)
        y *= 2
        return z + y


def main(backward=True):
    torch.manual_seed(0)
    net = Net()
    x = torch.randn(3, 4)
    out = net(x)
    held = [t.detach().clone() for t in (net.block.last, CACHE.get("t")) if t is not None]
    if not backward:
        return held
    out.sum().backward()
    return [out.detach(), *[p.grad for p in net.parameters()], *held]
"""
WRITE = "        y *= 2\n"
REWRITTEN = "        y = y * 2\n"

HELD = {
    "name-bound-from-an-attribute": "self.last = torch.sigmoid(self.fc(x))\n        out = self.last\n        return out",
    "another-function-keeping-it": "return grab(self.fc(x))",
    "unpacked-from-an-attribute": ("self.last = torch.sigmoid(self.fc(x))\n        self.pair = (self.last, x)\n"
                                   "        a, b = self.pair\n        return a"),
    "a-view-of-an-attribute": "self.last = torch.sigmoid(self.fc(x))\n        return self.last.view(3, 4)",
}


@pytest.mark.parametrize("name", sorted(HELD))
def test_a_callee_handing_back_what_it_holds_stays_unsafe(name):
    source = KEEPER.replace("BODY", HELD[name])
    verdicts = _verdicts(source, WRITE)
    assert verdicts and all(status == "unsafe" for status, _ in verdicts), verdicts
    assert REWRITTEN not in fixed_source(source, project=True)
    # the rewrite would leave the holder without the write
    before, after = _kept_after_forward(source), _kept_after_forward(source.replace(WRITE, REWRITTEN))
    assert before and not all(torch.equal(a, b) for a, b in zip(before, after))


def test_a_callee_returning_its_own_result_is_still_safe():
    """The control: the same block returning what it computed, kept by no one."""
    source = KEEPER.replace("BODY", "out = torch.sigmoid(self.fc(x))\n        return out")
    assert _verdicts(source, WRITE) == [("safe", None)]
    fixed = fixed_source(source, project=True)
    assert REWRITTEN in fixed
    got, want = run_program(fixed), run_program(source.replace(WRITE, REWRITTEN))
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


# ---- an element of a call's fresh result ------------------------------------------------------

HEAD = """\
import torch
import torch.nn as nn


class ProjectLayer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.head = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])
        self.n = n
        self.outs = []

    def forward(self, tokens):
        out_tokens = []
        for i in range(self.n):
            temp = self.head[i](tokens)
            FILL
        return out_tokens


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = ProjectLayer(2)

    def forward(self, x):
        cls = self.proj(x)[0]
        cls /= cls.norm(dim=-1, keepdim=True)
        return cls


def main(backward=True):
    torch.manual_seed(0)
    net = Net()
    x = torch.randn(3, 4)
    out = net(x)
    held = [t.detach().clone() for t in net.proj.outs]
    if not backward:
        return held
    out.pow(2).sum().backward()
    return [out.detach(), *[p.grad for p in net.parameters() if p.grad is not None]]
"""
HEAD_WRITE = "        cls /= cls.norm(dim=-1, keepdim=True)\n"
HEAD_REWRITTEN = "        cls = cls / cls.norm(dim=-1, keepdim=True)\n"


def test_an_element_of_a_fresh_list_the_callee_builds_gets_the_safe_fix():
    source = HEAD.replace("FILL", "out_tokens.append(temp)")
    assert _verdicts(source, HEAD_WRITE) == [("safe", None)]
    fixed = fixed_source(source, project=True)
    assert HEAD_REWRITTEN in fixed
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_program(source)
    got, want = run_program(fixed), run_program(source.replace(HEAD_WRITE, HEAD_REWRITTEN))
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


HEAD_HELD = {
    "the-list-is-kept-too": "out_tokens.append(temp)\n            self.outs = out_tokens",
    "an-attribute-put-in": "self.outs.append(temp)\n            out_tokens.append(self.outs[-1])",
    "the-callers-tensor-put-in": "out_tokens.append(tokens)",
    "a-view-of-the-callers-tensor": "out_tokens.append(tokens.view(3, 4))",
}


@pytest.mark.parametrize("name", sorted(HEAD_HELD))
def test_an_element_someone_else_holds_stays_unsafe(name):
    source = HEAD.replace("FILL", HEAD_HELD[name])
    verdicts = _verdicts(source, HEAD_WRITE)
    assert verdicts and all(status != "safe" for status, _ in verdicts), verdicts
    assert HEAD_REWRITTEN not in fixed_source(source, project=True)


def test_an_element_an_attribute_holds_would_miss_the_write():
    """What the look-alike guards: the rewrite leaves the holder's tensor unnormalised."""
    source = HEAD.replace("FILL", HEAD_HELD["an-attribute-put-in"])
    before, after = _kept_after_forward(source), _kept_after_forward(source.replace(HEAD_WRITE, HEAD_REWRITTEN))
    assert before and not all(torch.equal(a, b) for a, b in zip(before, after))


# ---- a method of a plain class of the file sharing a tensor method's name ---------------------

FUNSOR = """\
import torch


class Tensor:
    def __init__(self, data):
        self.data = data
        self.cache = data * 1.0

    def reciprocal(self):
        RECIPROCAL


def wrap(data):
    return Tensor(data)


def _reciprocal(x):
    result = x.reciprocal()
    result.clamp_(max=torch.finfo(result.dtype).max)
    return result


IMPLEMENTATIONS = {torch.Tensor: _reciprocal}  # (registered per type, as funsor's ops are)


def main(backward=True):
    torch.manual_seed(0)
    w = torch.randn(5, requires_grad=True)
    t = Tensor(w * 2 + 3)
    v = w.exp() + 1
    out = IMPLEMENTATIONS[type(v)](v)
    held = [t.cache.detach().clone()]
    if not backward:
        return held
    out.sum().backward()
    return [out.detach(), w.grad]
"""
FUNSOR_WRITE = "    result.clamp_(max=torch.finfo(result.dtype).max)\n"
FUNSOR_REWRITTEN = "    result = result.clamp(max=torch.finfo(result.dtype).max)\n"


def test_a_tensor_method_a_plain_class_of_the_file_defines_too_gets_the_safe_fix():
    source = FUNSOR.replace("RECIPROCAL", "return wrap(1.0 / self.data)")
    assert _verdicts(source, FUNSOR_WRITE) == [("safe", None)]
    fixed = fixed_source(source, project=True)
    assert FUNSOR_REWRITTEN in fixed
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_program(source)
    got, want = run_program(fixed), run_program(source.replace(FUNSOR_WRITE, FUNSOR_REWRITTEN))
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


@pytest.mark.parametrize("body", [
    "return self.cache",  # a tensor the instance holds
    "out = self.cache\n        return out",
])
def test_a_class_method_handing_back_a_tensor_it_holds_stays_unsafe(body):
    source = FUNSOR.replace("RECIPROCAL", body)
    verdicts = _verdicts(source, FUNSOR_WRITE)
    assert verdicts and all(status != "safe" for status, _ in verdicts), verdicts
    # on such an instance the rewrite would leave the held tensor unclamped
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    t = space["Tensor"](torch.tensor([float("inf"), 1.0]))
    space["_reciprocal"](t)
    assert torch.isfinite(t.cache).all()
    space2: dict = {"__name__": "case"}
    exec(compile(source.replace(FUNSOR_WRITE, FUNSOR_REWRITTEN), "case.py", "exec"), space2)
    t2 = space2["Tensor"](torch.tensor([float("inf"), 1.0]))
    space2["_reciprocal"](t2)
    assert not torch.isfinite(t2.cache).all()


def test_a_class_defining_in_place_methods_too_stays_unsafe():
    """`return self` of a class that defines `clamp_`: the write mutates the receiver itself."""
    source = FUNSOR.replace("RECIPROCAL", "return wrap(1.0 / self.data)").replace(
        "    def reciprocal(self):", "    def clamp_(self, max=None):\n        return self\n\n    def reciprocal(self):")
    verdicts = _verdicts(source, FUNSOR_WRITE)
    assert verdicts and all(status != "safe" for status, _ in verdicts), verdicts


# ---- what a callee returns, followed no further than it must ---------------------------------

BOXES = """\
import numpy as np
import torch

STORE = []


def fill(xmin, width):
    out = torch.zeros(xmin.shape[0], 2)
    out[:, 0] = xmin
    out[:, 1] = width
    STORE.append(out[:, 0])  # (a helper that may keep what it is given: not seen through)
    return out * 1.0


def to_corners_numpy(b):
    cx, w = b.T
    return np.stack([cx - 0.5 * w, cx + 0.5 * w], axis=-1)


def to_corners(b):
    if isinstance(b, torch.Tensor):
        cx, w = b.unbind(-1)
        return torch.stack([cx - 0.5 * w, cx + 0.5 * w], dim=-1)
    return to_corners_numpy(b)


def to_tensor(boxes, mode):
    out = torch.stack([boxes[:, 0], boxes[:, 1]], dim=-1)
    width = out[:, 1] - out[:, 0]
    out[:, 1] = width
    if mode == "vertices":
        out = fill(out[:, 0], width)
    return out


def main():
    torch.manual_seed(0)
    w = torch.randn(4, 2, requires_grad=True)
    known = to_corners(w.exp())
    known.clip_(min=0.0, max=1.5)
    boxes = to_tensor(w * 2, "plain")
    kept = boxes.exp()
    boxes[:, 0] += 1.0
    (known.sum() + boxes.sum() + kept.sum()).backward()
    return [known.detach(), boxes.detach(), w.grad]
"""


@pytest.mark.parametrize("write, rewritten", [
    ("    known.clip_(min=0.0, max=1.5)\n", "    known = known.clip(min=0.0, max=1.5)\n"),  # a numpy branch: no tensor
    ("    boxes[:, 0] += 1.0\n", "    boxes = boxes.clone()\n    boxes[:, 0] += 1.0\n"),  # values copied into a tensor
])
def test_values_copied_into_a_returned_tensor_or_an_array_library_result_are_held_by_no_one(write, rewritten):
    """`out[:, 1] = width` copies values into the tensor returned: `width` is no element of it,
    and handing `width` on to a helper that may keep it does not make the helper keep `out`; a
    numpy function (`np.stack`) returns no torch tensor anyone holds (transformers' RT-DETR
    `center_to_corners_format`, kornia's `Boxes3D.to_tensor`: safe fixes on main, kept safe)."""
    line = BOXES.splitlines().index(write.splitlines()[0]) + 1
    everything = Settings(select=("IPF",))
    verdicts = [(f.status.value if f.status else None, f.reason)
                for f in process_in_project(BOXES, everything).findings if f.span.line == line]
    assert verdicts == [("safe", None)], verdicts
    fixed = fixed_source(BOXES, everything, project=True)
    assert rewritten in fixed
    got, want = run_program(fixed), run_program(BOXES.replace(write, rewritten))
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))
