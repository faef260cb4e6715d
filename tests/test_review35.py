"""Second read of stop 35's branches (review35): soundness holes shown by running real torch.

Each program works (it runs under ``torch.no_grad()`` or reads nothing autograd needs); the
default ``fix`` must leave what it computes (outputs, final state) bit-identical, and a finding
must be proven only where the program fails at ``backward()``. The files are checked in a run
whose index shows every file (case.py and one other that imports nothing), as the safe
forward-input fix needs.

Each test failed first, on the branch (or on main) whose defect it shows; all were fixed in the
same stop (sound35a, sound35c, the lead), so none is marked.
"""

from __future__ import annotations


import pytest
import torch

from codemod.config import Settings
from tests.programs import assert_same_results, process_in_project, run_program




def _process(source: str, settings: Settings, fix: bool = False):
    return process_in_project(source, settings, fix)


def _run(source: str) -> list:
    return list(run_program(source))


_assert_same_results = assert_same_results


# ------------------------------------------------------------------------------------ fix24c
RES_STACK = """\
import torch
import torch.nn as nn


class Res(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x += self.fc(x)
        return x


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.blocks = nn.ModuleList([Res(4) for _ in range(n)])

    def forward(self, inp):
        h = self.proj(inp)
        for blk in self.blocks:
            h = blk(h)
        return h


def main():
    torch.manual_seed(0)
    net = Net(2)
    seen = []
    for name, m in net.named_modules():
        if name.startswith("blocks."):
            m.register_forward_hook(lambda mod, args, out: seen.append(out))
    with torch.no_grad():
        out = net(torch.randn(5, 3))
    return [out, *seen]
"""


# the hooks set in the constructor through the list's own `children()` (a "getter" that hands on
# no member for a module, but every member for a ModuleList)
RES_STACK_CHILDREN = RES_STACK.replace("""        self.blocks = nn.ModuleList([Res(4) for _ in range(n)])
""", """        self.blocks = nn.ModuleList([Res(4) for _ in range(n)])
        self.seen = []
        for member in self.blocks.children():
            member.register_forward_hook(lambda mod, args, out: self.seen.append(out))
""").replace("""    seen = []
    for name, m in net.named_modules():
        if name.startswith("blocks."):
            m.register_forward_hook(lambda mod, args, out: seen.append(out))
""", "").replace("return [out, *seen]", "return [out, *net.seen]")


@pytest.mark.parametrize("source", [RES_STACK, RES_STACK_CHILDREN], ids=["owner-named_modules", "list-children"])
def test_a_block_hooked_through_named_modules_keeps_its_in_place_write(source):
    """Forward hooks (feature extraction) registered through ``net.named_modules()`` (or the
    list's ``children()``) keep the block's output, which is its input, written in place by the
    next block: the original hooks all see the final tensor, the rewrite's see each block's own.
    The list's uses are all seen, but neither enumeration is followed."""
    assert "register_forward_hook" in source
    _assert_same_results(source)


NORM_HOOK = """\
import torch
import torch.nn as nn


class Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x /= x.norm(dim=-1, keepdim=True)
        return self.fc(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.norm = Norm(4)

    def forward(self, inp):
        h = self.proj(inp)
        h = self.norm(h)
        return h


def main():
    torch.manual_seed(0)
    net = Net()
    seen = []
    for name, m in net.named_modules():
        if name == "norm":
            m.register_forward_pre_hook(lambda mod, args: seen.append(args[0]))
    with torch.no_grad():
        out = net(torch.randn(5, 3))
    return [out, *seen]
"""


def test_a_member_hooked_through_named_modules_keeps_its_in_place_write():
    """The same hole on main, for a member set as ``self.norm`` (fix24b's rule): a forward
    pre-hook reached through ``net.named_modules()`` keeps the input ``x /= ...`` writes."""
    _assert_same_results(NORM_HOOK)


KEEPS_VIEW = """\
import torch
import torch.nn as nn


class Norm2(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, inp):
        self.seen = inp.detach()
        return torch.nn.functional.layer_norm(inp, self.w.shape, self.w, None, 1e-5)


class Res(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = Norm2(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x += self.fc(self.ln(x))
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.block = Res(4)

    def forward(self, inp):
        h = self.proj(inp)
        h = self.block(h)
        return h


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(5, 3))
    return [out, *[m.seen for m in net.modules() if hasattr(m, "seen")]]
"""


@pytest.mark.parametrize("kept", ["inp.detach()", "inp[0]"])
def test_a_callee_storing_a_view_of_its_argument_keeps_it(kept):
    """``self.seen = inp.detach()`` shares the input's storage: ``x += ...`` after
    ``self.ln(x)`` reaches it in the original, not after the rewrite. kept.py's ``_stores``
    follows only names (``self.seen = inp``), so the callee "keeps nothing given"."""
    _assert_same_results(KEEPS_VIEW.replace("inp.detach()", kept))


# ------------------------------------------------------------------------------------ rec24j
def _proven(source: str):
    """The proven findings (IPF1xx) of the default ``check``: (code, line)."""
    result = _process(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _backward_runs(source: str) -> bool:
    try:
        _run(source)
    except RuntimeError as error:
        assert "inplace" in str(error), error
        return False
    return True


SEQUENTIAL_HEAD = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.head = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(4, 2))
        CHANGE

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        return self.head(h)


def main():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(5, 3)).sum().backward()
    return [p.grad for p in net.parameters()]
"""


@pytest.mark.parametrize("change", ["self.head[0] = nn.Identity()", "self.head.insert(0, nn.Linear(4, 4))",
                                    "self.head[0].inplace = False", "self.head._modules['0'] = nn.Tanh()"])
def test_a_sequential_whose_first_layer_is_replaced_is_no_proven_hazard(change):
    """``self.head[0] = ...`` / ``self.head.insert(0, ...)`` after ``nn.Sequential(nn.ReLU(
    inplace=True), ...)``: the ReLU no longer gets the Sequential's input, backward runs, yet
    b801819 proves the in-place layer at ``self.head(h)`` (the sigmoid's saved output)."""
    source = SEQUENTIAL_HEAD.replace("CHANGE", change)
    assert _backward_runs(source)
    assert not _proven(source)


def test_the_sequential_head_control_is_a_real_hazard():
    """The control: unchanged, the same program raises at backward."""
    assert not _backward_runs(SEQUENTIAL_HEAD.replace("        CHANGE\n", ""))


# --------------------------------------------------------------------- fix24c: identity aliases
KEPT_BLOCK_ALIAS = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        out = self.fc(x)
        self.last = out
        return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        h = self.block(x)
        d = h.exp_()
        d *= 5
        return d, h


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(2, 3))
    return [*out, net.block.last]
"""


def test_identity_aliases_of_a_kept_block_output_are_not_all_the_references():
    """``h = self.block(x)`` (the block keeps ``out`` as ``self.last``), ``d = h.exp_()``,
    ``d *= 5``: 6ad3173 rebinds both names safely (``d = h = d * 5``), but ``self.last`` is a
    third reference: it sees ``* 5`` in the original only. (``result_kept`` is asked of the
    target's own bindings, not of its aliases'.) On main: unsafe (alias)."""
    _assert_same_results(KEPT_BLOCK_ALIAS)


VIEW_THEN_INPLACE_RESULT = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        b = h.reshape(-1)
        d = b.exp_()
        d *= 5
        return d, h


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(2, 3))
    return list(out)
"""


@pytest.mark.parametrize("view", ["h.reshape(-1)", "h.float()", "h.contiguous()"])
def test_the_result_of_an_in_place_method_on_a_view_is_that_view(view):
    """``b = h.reshape(-1)`` (or ``h.float()``, which returns ``h`` itself), ``d = b.exp_()``,
    ``d *= 5``: ``d`` is ``b``, which shares ``h``'s storage; the safe ``d = d * 5`` leaves
    ``h`` without the ``* 5`` it had. IPF003 at ``b.exp_()`` says view-alias; IPF101 at
    ``d *= 5`` says safe."""
    _assert_same_results(VIEW_THEN_INPLACE_RESULT.replace("h.reshape(-1)", view))


INPLACE_SWITCHED_OFF = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.act = nn.ReLU(inplace=True)
        self.out = nn.Linear(4, 2)
        self.act.inplace = False

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        return self.out(self.act(h))


def main():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(5, 3)).sum().backward()
    return [p.grad for p in net.parameters()]
"""


def test_a_module_switched_out_of_place_after_it_is_built_is_no_proven_hazard():
    """``self.act.inplace = False`` after ``nn.ReLU(inplace=True)``: the ReLU runs out of place,
    backward runs, yet the call on the sigmoid's saved output is proven (IPF102). rec24j's
    subclass and Sequential rules inherit it (``self.drop.inplace = False`` in a subclass)."""
    assert _backward_runs(INPLACE_SWITCHED_OFF)
    assert not _proven(INPLACE_SWITCHED_OFF)


GLOBAL_KEEP = """\
import torch
import torch.nn as nn

LAST = None


def remember(t):
    global LAST
    LAST = t
    return t.sum()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        s = remember(h)
        h += 1
        return h + s


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(2, 3))
    return [out, LAST]
"""


def test_a_helper_keeping_its_argument_in_a_global_holds_it():
    """``remember(h)`` stores ``h`` as the module's ``LAST``; ``h += 1`` after it reaches
    ``LAST`` in the original, not after ``h = h + 1``. kept.py's ``_stores`` looks for the
    parameter itself declared global, not a global assigned from it (fix24c's ``stored_before``
    already catches ``into.append(t)``)."""
    _assert_same_results(GLOBAL_KEEP)


APPENDED_HEAD = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        layers = []
        layers.append(nn.ReLU(inplace=True))
        layers.append(nn.Linear(4, 2))
        self.net = nn.Sequential(*layers)
        CHANGE

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        return self.net(h)


def main():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(5, 3)).sum().backward()
    return [p.grad for p in net.parameters()]
"""


def test_a_sequential_built_from_appended_layers_whose_first_is_replaced_is_no_proven_hazard():
    """The same for ``self.net = nn.Sequential(*layers)`` with the in-place layer appended
    first (main's older rule): ``self.net[0] = nn.Identity()`` afterwards, backward runs."""
    changed = APPENDED_HEAD.replace("CHANGE", "self.net[0] = nn.Identity()")
    assert _backward_runs(changed)
    assert not _proven(changed)
    unchanged = APPENDED_HEAD.replace("        CHANGE\n", "")
    assert not _backward_runs(unchanged)
    assert _proven(unchanged)  # the control stays a proven hazard
