"""Second read of session 34's merged code (review34): soundness holes shown by running real torch.

Each test first runs the program with torch to fix its label (it works, or it raises; the fixed
program prints the same, or not), then asks the tool. They fail on main at 2ee9194 and are
marked ``xfail(strict=True)``: the day one passes, the mark must go (a strict xfail that passes
fails the run).
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import textwrap

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
NORM = """\
class Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x /= x.norm(dim=-1, keepdim=True)
        return self.fc(x)


"""
NORM_WRITE = HEADER.count("\n") + 7  # the line of `x /= ...`


def _findings(source: str, path: str = "case.py"):
    result = process_source(source.encode(), path, Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [(f.code, f.span.line, f.status.value if f.status else None) for f in result.findings]


# The out-of-place rewrite each case's write got as a safe fix (now unsafe, and then not applied
# by default, or applied with the aliases rebound too): the label is what that plain rewrite prints.
_PLAIN = {"x /= x.norm(dim=-1, keepdim=True)": "x = x / x.norm(dim=-1, keepdim=True)",
          "x += self.bias": "x = x + self.bias",
          "levels[i - 1] += F.interpolate(": "levels[i - 1] = levels[i - 1] + F.interpolate("}


def _fixed(source: str) -> str:
    found = [old for old in _PLAIN if old in source]
    assert len(found) == 1 and source.count(found[0]) == 1, found
    return source.replace(found[0], _PLAIN[found[0]])


def _printed(source: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "case.py", "exec"), {"__name__": "case"})
    return out.getvalue()


# ------------------------------------------------------------------ fix24b: a safe fix of a forward's input
# ``own_values_passed`` counts the calls of ``self.<attr>`` and of a local name, but the instance
# is reachable in more ways: through the outer instance (``net.norm(v)``), a forward hook that
# keeps the input, or a module of the run that imports the file whole (``import a``; ``a.Norm``).
# In each the caller's tensor is read after the in-place write; the "safe" fix stops the write.
OUTER_ATTRIBUTE = HEADER + NORM + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Norm(4)

    def forward(self, x):
        h = x * 2
        return self.norm(h)


torch.manual_seed(0)
net = Net()
v = torch.randn(2, 4)
with torch.no_grad():
    net.norm(v)
print(v)
"""

HOOK = HEADER + NORM + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []
        self.norm = Norm(4)
        self.norm.register_forward_hook(lambda m, i, o: self.seen.append(i[0]))

    def forward(self, x):
        h = x * 2
        return self.norm(h)


torch.manual_seed(0)
net = Net()
with torch.no_grad():
    net(torch.randn(2, 4))
print(net.seen[0])
"""


@pytest.mark.parametrize("source", [OUTER_ATTRIBUTE, HOOK], ids=["outer-attribute", "forward-hook"])
def test_a_forward_input_the_caller_still_sees_is_no_safe_fix(source):
    assert _printed(source) != _printed(_fixed(source))  # the label: the fix changes what it prints
    assert ("IPF101", NORM_WRITE, "safe") not in _findings(source)


def test_a_class_used_through_a_whole_module_import_is_no_safe_fix(tmp_path, monkeypatch):
    from codemod.engine.files import process_path
    from codemod.engine.project import build_index

    a = tmp_path / "a.py"
    a.write_text(HEADER + NORM + "def build():\n    n = Norm(4)\n    h = torch.randn(2, 4) * 2\n    n(h)\n")
    b = tmp_path / "b.py"
    b.write_text("import torch\n\nimport a\n\n\ntorch.manual_seed(0)\nn = a.Norm(4)\nv = torch.randn(2, 4)\n"
                 "with torch.no_grad():\n    n(v)\nprint(v)\n")
    import sys

    monkeypatch.syspath_prepend(str(tmp_path))
    files = [str(a), str(b)]
    try:
        before = _printed(b.read_text())
        a.write_text(_fixed(a.read_text()))
        sys.modules.pop("a", None)
        assert _printed(b.read_text()) != before  # the label: b.py prints another v after the fix
    finally:
        sys.modules.pop("a", None)
    a.write_text(HEADER + NORM + "def build():\n    n = Norm(4)\n    h = torch.randn(2, 4) * 2\n    n(h)\n")
    found = process_path(str(a), Settings(select=("IPF1",)), False, False, False, None, build_index(files))
    assert ("IPF101", NORM_WRITE, "safe") not in [
        (f.code, f.span.line, f.status.value if f.status else None) for f in found.findings]


# ------------------------------------------------------------------ result cache: a class built elsewhere
# ``Summaries._param_values`` gives up (None) where the run's other files build the class more
# often than this file does (``index.calls`` of ``module.Class``). ``digest_for`` hashes the
# sites of the module's functions and methods only, not of its classes, and ``engine.asked``
# notes no such answer: a cached result of a.py outlives a change of b.py that adds a
# construction. (Pre-existing: 140e41e behaves the same.)
BLOCK = HEADER + """\
class Block(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=inplace)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        return self.act(h)
"""
USER = "import torch\n\nfrom a import Block\n\n\ndef main():\n    x = torch.randn(2, 4)\n    return {}\n"


def test_a_construction_added_in_another_file_is_a_cache_miss(tmp_path):
    from codemod.engine.files import process_path
    from codemod.engine.project import build_index

    a, b, cache = tmp_path / "a.py", tmp_path / "b.py", str(tmp_path / "cache")
    a.write_text(BLOCK)
    files = [str(a), str(b)]

    def check(cache_dir):
        result = process_path(str(a), Settings(select=("IPF1",)), False, False, False, cache_dir,
                              build_index(files, cache_dir))
        return sorted((f.code, f.span.line) for f in result.findings)

    b.write_text(USER.format("x"))
    assert check(cache) == check(None) == []
    b.write_text(USER.format("Block(inplace=True)(x).sum()"))
    fresh = check(None)
    assert fresh  # the label: with the construction, a.py's in-place ReLU is reported
    assert check(cache) == fresh


# ------------------------------------------------------------------ rec24i: a layer appended under an if
# ``Chains._appended_before`` takes the last statement of an ``if`` without ``else`` as the layer
# before the in-place member: the path that appends it. On the other path the member follows the
# layer before the ``if`` (here a Linear, which saves its input, not its output); the only
# construction takes that path, and the program runs. (A hazard on some branch is proven by
# design, docs/concepts.md; but here the file's only construction decides the branch, the way
# rec24h prunes ``if self.act is not None`` by constructor arguments: lower severity.)
IF_LAYER = HEADER + """\
class Net(nn.Module):
    def __init__(self, use_sig=False):
        super().__init__()
        layers = [nn.Linear(4, 4)]
        if use_sig:
            layers.append(nn.Sigmoid())
        layers.append(nn.ReLU(inplace=True))
        layers.append(nn.Linear(4, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


net = Net()
net(torch.randn(2, 4)).sum().backward()
print(net.net[0].weight.grad.sum())
"""


def test_an_in_place_layer_after_an_if_that_does_not_run_is_not_reported():
    _printed(IF_LAYER)  # the label: runs, backward included
    assert not [f for f in _findings(IF_LAYER) if f[0] == "IPF102"]


# ------------------------------------------------------------------ rec24i: switched on, then detached
# ``Leaves._switched_on`` finds ``h.requires_grad_()`` between the factory and the write, but not
# a ``h.detach_()`` after it (nor does the old path for ``requires_grad=True`` leaves): the
# detached tensor is no leaf that requires grad, the write is allowed, and the program runs.
DETACHED = HEADER + """\
def main():
    h = torch.zeros(2, 3)
    h.requires_grad_()
    for step in range(3):
        h.detach_()
        h.mul_(0.5)
        out = (h * 2).sum()
        print(step, out.item())


main()
"""


def test_a_leaf_detached_before_the_write_is_no_proven_leaf_write():
    _printed(DETACHED)  # the label: no "leaf Variable" error
    assert not [f for f in _findings(DETACHED) if f[0] in ("IPF103", "IPF105")]


# ------------------------------------------------------------------ a tensor kept on self before the write
# ``x`` stored as ``self.last`` and then written in place: the attribute is the same tensor and
# sees the write; after the "safe" rebinding fix it keeps the old values. The function's own
# alias check sees the attribute only where this function reads it again (``return self.last``:
# unsafe, alias); a read from another method or from outside is not seen. In a forward whose
# input is stored (fix24b's own_values_passed: the callers pass their own tensor) it became
# safe this session; with a local tensor it was safe before (140e41e) too.
KEPT_INPUT = HEADER + """\
class Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.last = None

    def forward(self, x):
        self.last = x
        x /= x.norm(dim=-1, keepdim=True)
        return self.fc(x)


def main():
    torch.manual_seed(0)
    n = Norm(4)
    h = torch.randn(2, 4) * 1
    with torch.no_grad():
        n(h)
    print(n.last)


main()
"""
KEPT_LOCAL = HEADER + """\
class Keeper:
    def __init__(self):
        self.last = None

    def step(self, w):
        x = w * 2
        self.last = x
        x /= x.norm(dim=-1, keepdim=True)
        return x.sum()


torch.manual_seed(0)
k = Keeper()
k.step(torch.randn(2, 4))
print(k.last)
"""


@pytest.mark.parametrize("source", [KEPT_INPUT, KEPT_LOCAL], ids=["forward-input", "local"])
def test_a_tensor_kept_on_self_before_the_write_is_no_safe_fix(source):
    assert _printed(source) != _printed(_fixed(source))  # the label: the fix changes what it prints
    line = source.splitlines().index("        x /= x.norm(dim=-1, keepdim=True)") + 1
    assert ("IPF101", line, "safe") not in _findings(source)


# fix24b's ``arguments._imported_elsewhere`` reads the other modules' imports (``index.modules``)
# straight from the index: neither ``digest_for`` (this module's exports only) nor
# ``engine.asked`` holds them. A check's cached "[*] safe" outlives another file starting to
# import the class (fresh: unsafe, param-mutation).
def test_an_import_added_in_another_file_is_a_cache_miss(tmp_path):
    from codemod.engine.files import process_path
    from codemod.engine.project import build_index

    a, c, cache = tmp_path / "a.py", tmp_path / "c.py", str(tmp_path / "cache")
    a.write_text(HEADER + NORM + "def build():\n    n = Norm(4)\n    h = torch.randn(2, 4) * 2\n    n(h)\n")
    files = [str(a), str(c)]

    def check(cache_dir):
        result = process_path(str(a), Settings(select=("IPF1",)), False, False, False, cache_dir,
                              build_index(files, cache_dir))
        return sorted((f.code, f.span.line, f.status.value if f.status else None) for f in result.findings)

    c.write_text("import torch\n\n\ndef main():\n    return torch.randn(2, 4)\n")
    assert check(cache) == check(None) == [("IPF101", NORM_WRITE, "safe")]
    c.write_text("import torch\n\nfrom a import Norm\n\n\ndef main():\n    v = torch.randn(2, 4)\n"
                 "    with torch.no_grad():\n        Norm(4)(v)\n    return v\n")
    fresh = check(None)
    assert fresh == [("IPF101", NORM_WRITE, "unsafe")]  # the label: another file's caller sees the write
    assert check(cache) == fresh


# ------------------------------------------------------------------ a frozen embedding saves nothing
# An op saves its inputs only where something it reads requires grad: an ``nn.Embedding`` whose
# weight is switched off (``self.embedding.weight.requires_grad = False``) records no backward
# node and saves no indices, so writing the ids afterwards is harmless and the program runs.
# IPF101 (proven) says the ids were saved. The member form (``self.ae.embedding(ids)``) is
# rec24i's new path (3daa998); the direct one was so before (140e41e).
FROZEN_MEMBER = HEADER + """\
class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.embedding.weight.requires_grad = False


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ae = AE()
        self.fc = nn.Linear(4, 1)

    def forward(self, ids):
        e = self.ae.embedding(ids)
        ids += 1
        return self.fc(e).sum() + ids.sum()


net = Net()
net(torch.tensor([1, 2, 3])).backward()
"""
FROZEN_DIRECT = HEADER + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.embedding.weight.requires_grad = False
        self.fc = nn.Linear(4, 1)

    def forward(self, ids):
        e = self.embedding(ids)
        ids += 1
        return self.fc(e).sum() + ids.sum()


net = Net()
net(torch.tensor([1, 2, 3])).backward()
"""


@pytest.mark.parametrize("source", [FROZEN_MEMBER, FROZEN_DIRECT], ids=["member", "direct"])
def test_ids_written_after_a_frozen_embedding_are_no_proven_hazard(source):
    _printed(source)  # the label: backward runs
    assert not [f for f in _findings(source) if f[0] == "IPF101"]


# ------------------------------------------------------------------ a module's result it keeps itself
# fix24b (f3b6028, tensor_kind): ``x = self.block(x)`` is a tensor where every return of the
# block's forward is one, so ``x += self.bias`` lost its ``unknown-type`` and became a safe fix.
# But the block keeps what it returns (``self.last = out``): the write reaches ``net.block.last``
# in the original, not after the rewrite. (rec24h's e74d18d makes the same shape known too.)
KEPT_OUTPUT = HEADER + """\
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.Sigmoid()
        self.last = None

    def forward(self, x):
        out = self.act(self.fc(x))
        self.last = out
        return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.bias = nn.Parameter(torch.ones(4))

    def forward(self, x):
        x = self.block(x)
        x += self.bias
        return x.sum()


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        net(torch.randn(2, 4))
    print(net.block.last)


main()
"""


def test_a_result_the_module_keeps_is_no_safe_fix():
    assert _printed(KEPT_OUTPUT) != _printed(_fixed(KEPT_OUTPUT))  # the label
    line = KEPT_OUTPUT.splitlines().index("        x += self.bias") + 1
    assert ("IPF101", line, "safe") not in _findings(KEPT_OUTPUT)


# ------------------------------------------------------------------ rec24h: an activation replaced after construction
# rec24h prunes ``if self.act is not None: x = self.act(x)`` by the constructor arguments the
# file passes (``ConvAct(c, c, act=True)``: a ReLU, whose output autograd saves). The outer
# class then replaces the member's activation (``self.proj.act = None``): no ReLU runs, the
# caller's ``x += bias`` writes the convolution's output (not saved) and backward runs; IPF101
# (proven) says the ReLU saved it. (140e41e: no finding.)
REPLACED_ACT = HEADER + """\
class ConvAct(nn.Module):
    def __init__(self, cin, cout, act=None):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        if act is None:
            self.act = None
        else:
            self.act = nn.ReLU()

    def forward(self, x):
        x = self.conv(x)
        if self.act is not None:
            x = self.act(x)
        return x


class Head(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.proj = ConvAct(c, c, act=True)
        self.proj.act = None
        self.out = nn.Conv2d(c, 1, 1)

    def forward(self, x, bias):
        x = self.proj(x)
        x += bias
        return self.out(x)


torch.manual_seed(0)
head = Head(3)
head(torch.randn(2, 3, 5, 5), torch.randn(1, 3, 1, 1)).pow(2).sum().backward()
"""


def test_an_activation_removed_after_construction_is_no_proven_hazard():
    _printed(REPLACED_ACT)  # the label: backward runs
    line = REPLACED_ACT.splitlines().index("        x += bias") + 1
    assert not [f for f in _findings(REPLACED_ACT) if f[:2] == ("IPF101", line)]


# The same with rec24h's list of activations (552e968): the lateral keeps its output, the
# pyramid's ``levels[i - 1] += ...`` writes it; the "safe" rewrite puts a new tensor in the slot.
KEPT_LEVEL = HEADER + """\
import torch.nn.functional as F


class Lateral(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1)
        self.act = nn.ReLU()

    def forward(self, x):
        out = self.act(self.conv(x))
        self.last = out
        return out


class Pyramid(nn.Module):
    def __init__(self, chans, cout):
        super().__init__()
        self.lats = nn.ModuleList([Lateral(c, cout) for c in chans])

    def forward(self, feats):
        levels = [lat(feats[i]) for i, lat in enumerate(self.lats)]
        for i in range(len(levels) - 1, 0, -1):
            levels[i - 1] += F.interpolate(levels[i], size=levels[i - 1].shape[-2:])
        return levels


def main():
    torch.manual_seed(0)
    net = Pyramid([2, 3], 4)
    with torch.no_grad():
        net([torch.randn(1, 2, 4, 4), torch.randn(1, 3, 2, 2)])
    print(net.lats[0].last.sum())


main()
"""


def test_a_level_the_lateral_keeps_is_no_safe_fix():
    assert _printed(KEPT_LEVEL) != _printed(_fixed(KEPT_LEVEL))  # the label
    line = KEPT_LEVEL.splitlines().index(
        "            levels[i - 1] += F.interpolate(levels[i], size=levels[i - 1].shape[-2:])") + 1
    assert not [f for f in _findings(KEPT_LEVEL) if f[1] == line and f[2] == "safe"]


# Pre-existing (140e41e too), the same group: a ModuleList of one class read as running that
# class's forward last, though the class replaces its last member (``self.blocks[-1] = ...``).
REPLACED_MEMBER = HEADER + """\
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(3)])
        self.blocks[-1] = nn.Linear(4, 4)

    def forward(self, x, bias):
        for blk in self.blocks:
            x = blk(x)
        x += bias
        return x.sum()


net = Net()
net(torch.randn(2, 4), torch.ones(4)).backward()
"""


def test_a_module_list_member_replaced_after_construction_is_no_proven_hazard():
    _printed(REPLACED_MEMBER)  # the label: backward runs
    line = REPLACED_MEMBER.splitlines().index("        x += bias") + 1
    assert not [f for f in _findings(REPLACED_MEMBER) if f[:2] == ("IPF101", line)]


# ------------------------------------------------------------------ fix24b: `.cuda()` may hand back its input
# ``arguments._fresh`` takes ``h = v.cuda()`` as a new tensor (``cuda`` is a tensor method, not in
# ``RETURNS_INPUT_METHODS``; measured on a machine without CUDA, unlike ``cpu``). On a CUDA tensor
# ``Tensor.cuda()`` returns the tensor itself (documented: "no copy is performed and the original
# object is returned"), so the forward's write reaches ``v`` and the "safe" fix stops it. The
# run below needs a GPU (not drawn this session); the static half fails anywhere.
CUDA_ALIAS = HEADER + NORM + """\
def main():
    torch.manual_seed(0)
    n = Norm(4)
    n.cuda()
    v = torch.randn(2, 4, device="cuda")
    h = v.cuda()
    with torch.no_grad():
        n(h)
    print(v)


main()
"""


def test_a_cuda_copy_that_is_no_copy_is_no_safe_fix():
    if torch.cuda.is_available():
        assert _printed(CUDA_ALIAS) != _printed(_fixed(CUDA_ALIAS))  # the label
    assert ("IPF101", NORM_WRITE, "safe") not in _findings(CUDA_ALIAS)
