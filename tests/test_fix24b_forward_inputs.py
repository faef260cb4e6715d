"""Issue 24 (default `fix`, fix24b): a module's `forward` that writes into its input in place,
where autograd saved the input (`x /= x.norm(...)`, `x += self.attn(self.ln(x))`).

Rebinding the input (`x = x / ...`) changes one thing besides the fix itself: the caller's tensor
no longer sees the write. The fix is safe where every call of the module the file holds passes a
tensor that nothing else sees afterwards: the class is only ever built into a name or a
`self.<attr>` that is only called, every call passes a local name bound from a fresh value, the
caller reads that tensor no more after the call (or the call's own statement rebinds the name),
and no other name, container or attribute holds it. Each program below is a small shape of the
group (written from the pattern, not copied from a report), run with torch: the original raises
at backward, and the fixed program's gradients equal an out-of-place control. The negative
controls (the caller reads its tensor again, passes its own parameter, a container holds the
instance or the tensor, an attribute is passed) stay unsafe: there the rewrite would change
what a working (grad-off) program computes.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile
import textwrap

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.engine.project import build_index
from tests.programs import process_in_project, raises_inplace, run_program

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
OFFSET = HEADER.count("\n")

NORM = """\
class Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x /= x.norm(dim=-1, keepdim=True)
        return self.fc(x)


"""
NORM_CONTROL = NORM.replace("x /= x.norm(dim=-1, keepdim=True)", "x = x / x.norm(dim=-1, keepdim=True)")
WRITE_LINE = 7  # `x /= ...` in NORM, after the header


def _process(body: str, settings: Settings, fix: bool = False):
    """The file checked in a run that shows every file that could import it (case.py and one
    other that imports nothing): checked alone, any file may import the class, and the rule
    says nothing is safe (review34)."""
    return process_in_project(HEADER + textwrap.dedent(body), settings, fix)


def marks(body: str):
    result = _process(body, Settings(select=("IPF1",)))
    return [(f.code, f.span.line - OFFSET, f.status.value if f.status else None, f.reason)
            for f in result.findings]


def fixed(body: str) -> str:
    result = _process(body, Settings(), fix=True)
    return result.fixed if result.changed else (HEADER + textwrap.dedent(body))


def test_a_file_checked_alone_gets_no_safe_forward_input_fix():
    """No index: the files that import the class are not seen (review34): unsafe."""
    body = NORM + POSITIVE["local-instance"]
    result = process_source((HEADER + body).encode(), "case.py", Settings(select=("IPF1",)))
    assert [(f.span.line - OFFSET, f.status.value, f.reason) for f in result.findings] == \
        [(WRITE_LINE, "unsafe", "param-mutation")]
    assert [m[2] for m in marks(body) if m[1] == WRITE_LINE] == ["safe"]  # the control: in a run


def run(source: str):
    return run_program(source)


# ----------------------------------------------------------------- safe: the caller's value is its own
POSITIVE = {
    "attribute-rebound": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.norm = Norm(4)
        self.head = nn.Linear(4, 1)

    def forward(self, inp):
        h = self.proj(inp)
        h = self.norm(h)
        return self.head(h)


def main():
    net = Net()
    loss = net(torch.randn(5, 3)).sum()
    loss.backward()
    return [p.grad for p in net.parameters()]
""",
    "local-instance": """\
def main():
    proj = nn.Linear(3, 4)
    norm = Norm(4)
    h = proj(torch.randn(5, 3))
    out = norm(h)
    out.sum().backward()
    return [proj.weight.grad, proj.bias.grad, norm.fc.weight.grad]
""",
    "temporary-in-loop": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.norm = Norm(4)

    def forward(self, inp):
        h = self.proj(inp)
        for _ in range(2):
            h = self.norm(h)
        return h


def main():
    net = Net()
    net(torch.randn(5, 3)).sum().backward()
    return [p.grad for p in net.parameters()]
""",
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_forward_input_write_is_fixed_safely_where_callers_pass_their_own_values(name):
    body = NORM + POSITIVE[name]
    original = HEADER + body
    assert raises_inplace(original)  # the hazard is real
    found = [m for m in marks(body) if m[1] == WRITE_LINE]
    assert found and found[0][2] == "safe", marks(body)
    result = fixed(body)
    assert "x = x / x.norm(dim=-1, keepdim=True)" in result
    got = run(result)
    want = run(HEADER + NORM_CONTROL + POSITIVE[name])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    assert fixed(result[len(HEADER):]) == result  # the safe tier is a fixed point


# ------------------------------------------------- unsafe: the rewrite would change a working program
NEGATIVE = {
    # the caller reads its tensor again: with grad off it sees the division today
    "read-after": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.norm = Norm(4)

    def forward(self, inp):
        h = self.proj(inp)
        s = self.norm(h)
        return s + h


def main():
    net = Net()
    with torch.no_grad():
        return [net(torch.randn(5, 3))]
""",
    # the caller passes its own parameter: its caller may read it
    "caller-parameter": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Norm(4)

    def forward(self, h):
        return self.norm(h)


def main():
    net = Net()
    h = torch.randn(5, 4)
    with torch.no_grad():
        out = net(h)
    return [out, h]
""",
    # a list holds the tensor before the call
    "held-by-a-list": """\
def main():
    proj = nn.Linear(3, 4)
    norm = Norm(4)
    h = proj(torch.randn(5, 3))
    keep = [h]
    with torch.no_grad():
        out = norm(h)
    return [out, keep[0]]
""",
    # an attribute is passed: its owner keeps the tensor
    "attribute-argument": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Norm(4)
        self.register_buffer("state", torch.randn(5, 4))

    def forward(self):
        return self.norm(self.state)


def main():
    net = Net()
    with torch.no_grad():
        out = net()
    return [out, net.state]
""",
    # the instance is handed to a container: its calls are not all seen
    "instance-in-a-container": """\
def main():
    layers = nn.ModuleList([Norm(4)])
    h = torch.randn(5, 4)
    with torch.no_grad():
        for layer in layers:
            out = layer(h)
    return [out, h]
""",
    # another name holds the tensor
    "alias": """\
def main():
    proj = nn.Linear(3, 4)
    norm = Norm(4)
    h = proj(torch.randn(5, 3))
    g = h
    with torch.no_grad():
        out = norm(h)
    return [out, g]
""",
    # review34: the instance called through its owner from outside (`net.norm(v)`)
    "outer-attribute": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Norm(4)

    def forward(self, x):
        h = x * 2
        return self.norm(h)


def main():
    torch.manual_seed(0)
    net = Net()
    v = torch.randn(2, 4)
    with torch.no_grad():
        out = net.norm(v)
    return [out, v]
""",
    # review34: a forward hook keeps the input
    "forward-hook": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []
        self.norm = Norm(4)
        self.norm.register_forward_hook(lambda m, i, o: self.seen.append(i[0]))

    def forward(self, x):
        h = x * 2
        return self.norm(h)


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(2, 4))
    return [out, net.seen[0]]
""",
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_forward_input_write_stays_unsafe_where_a_caller_may_see_it(name):
    body = NORM + NEGATIVE[name]
    found = [m for m in marks(body) if m[1] == WRITE_LINE]
    assert all(m[2] != "safe" for m in found), found
    assert fixed(body) == HEADER + body  # default `fix` leaves it
    # the rewrite would change what this working program computes
    got = run(HEADER + body)
    control = run(HEADER + NORM_CONTROL + NEGATIVE[name])
    assert any(not torch.equal(g, w) for g, w in zip(got, control))


# ------------------------------ torch.linalg / torch.fft / torch.special results are tensors
# (their documented signature returns `-> Tensor`, and a call on a small matrix returns a new one:
# scripts/gen_torch_api.py), so the fix of a write into one is decided like any tensor's.
LINALG = """\
def main():
    rot = torch.randn(6, 3, requires_grad=True)
    theta = torch.linalg.norm(rot, dim=-1)
    theta += 1.0e-10
    out = rot / theta.unsqueeze(-1)
    out.pow(2).sum().backward()
    return [rot.grad]
"""


def test_a_documented_tensor_function_result_gets_the_safe_fix():
    assert raises_inplace(HEADER + LINALG)
    found = [m for m in marks(LINALG) if m[1] == 4]
    assert found and found[0][2] == "safe", marks(LINALG)
    result = fixed(LINALG)
    assert "theta = theta + 1.0e-10" in result
    control = LINALG.replace("theta += 1.0e-10", "theta = theta + 1.0e-10")
    assert all(torch.equal(g, w) for g, w in zip(run(result), run(HEADER + control)))


DIAGONAL = """\
def main():
    a = torch.randn(3, 3)
    d = torch.linalg.diagonal(a)
    d *= 2
    return [a]
"""


def test_a_view_of_linalg_stays_unknown():
    # linalg.diagonal is a view of its input: rebinding `d` would leave `a` unchanged
    assert "torch.linalg.diagonal" not in __import__("codemod.torch_api", fromlist=["x"]).TENSOR_FUNCTIONS
    assert fixed(DIAGONAL) == HEADER + DIAGONAL
    control = DIAGONAL.replace("d *= 2", "d = d * 2")
    assert not torch.equal(run(HEADER + DIAGONAL)[0], run(HEADER + control)[0])


# ------------------------------ a call of a module of the file whose forward returns a tensor
BLOCKS = """\
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

    def forward(self, x):
        return self.body(x)


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x), x


class Same(nn.Module):
    def forward(self, x):
        return x


"""
RESIDUAL = """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.emb = nn.Linear(2, 4)

    def forward(self, x, t):
        h = self.block(x)
        h += self.emb(t)
        return h.sigmoid()


def main():
    net = Net()
    x = torch.randn(3, 4)
    net(x, torch.randn(3, 2)).sum().backward()
    return [p.grad for p in net.parameters()]
"""


def test_a_module_call_whose_forward_returns_a_tensor_is_a_tensor():
    body = BLOCKS + RESIDUAL
    assert raises_inplace(HEADER + body)  # ReLU saved its output, which `+=` writes
    line = BLOCKS.count("\n") + 9
    found = [m for m in marks(body) if m[1] == line]
    assert found and found[0][2] == "safe", marks(body)
    result = fixed(body)
    control = body.replace("h += self.emb(t)", "h = h + self.emb(t)")
    assert "h = h + self.emb(t)" in result
    assert all(torch.equal(g, w) for g, w in zip(run(result), run(HEADER + control)))


RETURNS_INPUT = """\
def main():
    same = Same()
    x = torch.randn(3, 4)
    h = same(x)
    h += 1
    return [x, h]
"""


def test_a_module_handing_its_input_back_gets_no_safe_fix():
    body = BLOCKS + RETURNS_INPUT
    assert fixed(body) == HEADER + body
    control = body.replace("h += 1", "h = h + 1")
    assert not torch.equal(run(HEADER + body)[0], run(HEADER + control)[0])


def test_a_module_returning_a_tuple_is_no_tensor():
    body = BLOCKS + """\
def main():
    pair = Pair()
    out = pair(torch.randn(3, 4))
    out += (1,)
    return out
"""
    assert all(m[2] != "safe" for m in marks(body))


# ------------------------------ an alias read later only for its gradient: `.grad` sees no value write
LEAF_GRAD = """\
import torch.nn.functional as F


def main():
    x0 = torch.randn(4, 6, requires_grad=True)
    x = x0
    x = F.relu(x, inplace=True)
    (x * 2).sum().backward()
    return [x0.grad]
"""
LEAF_GRAD_CONTROL = LEAF_GRAD.replace("F.relu(x, inplace=True)", "F.relu(x)")


def test_an_alias_read_later_only_for_its_grad_does_not_block_the_fix():
    try:
        run(HEADER + LEAF_GRAD)
        raise AssertionError("the original should raise")
    except RuntimeError as error:
        assert "leaf Variable that requires grad" in str(error)
    found = [m for m in marks(LEAF_GRAD) if m[1] == 7]
    assert found and found[0][2] == "safe", marks(LEAF_GRAD)
    result = fixed(LEAF_GRAD)
    assert "x = F.relu(x, inplace=False)" in result and "x0 =" not in result.split("x = x0")[1]
    assert all(torch.equal(g, w) for g, w in zip(run(result), run(HEADER + LEAF_GRAD_CONTROL)))


LEAF_VALUES = """\
import torch.nn.functional as F


def main():
    w = torch.randn(4, 6, requires_grad=True)
    y = w.tanh()
    x = y
    x = F.relu(x, inplace=True)
    return [x, y]
"""


def test_an_alias_whose_values_are_read_later_stays_unsafe():
    found = [m for m in marks(LEAF_VALUES) if m[1] == 8]
    assert found and all(m[2] != "safe" for m in found), marks(LEAF_VALUES)
    control = LEAF_VALUES.replace("F.relu(x, inplace=True)", "F.relu(x)")
    assert not torch.equal(run(HEADER + LEAF_VALUES)[1], run(HEADER + control)[1])


# ------------------------- stop 35: a hook anywhere the instances may reach (sound35a, review35)
# A hook registered through an enumeration (``net.modules()``, ``apply``) may sit on any module,
# and a helper of another file linked by imports may register it: any module hook (or a replaced
# ``forward``) in a file that can be handed the instances makes the fix unsafe. A tensor's own
# gradient hook (``out.register_hook``) sees gradients only, and a file the case is not linked to
# cannot be handed its modules: both leave the fix safe.
CLIP = """\
class Clip(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, z):
        z /= z.abs().amax(dim=0, keepdim=True) + 1
        return self.lin(z)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(2, 3)
        self.clip = Clip(3)

    def forward(self, a):
        t = self.embed(a)
        t = self.clip(t)
        return t


"""
CLIP_WRITE_LINE = 7
CLIP_CONTROL = CLIP.replace("z /= z.abs().amax(dim=0, keepdim=True) + 1", "z = z / (z.abs().amax(dim=0, keepdim=True) + 1)")
WATCHER = """\
def watch(model, into):
    model.apply(lambda m: m.register_forward_hook(lambda mod, args, out: into.append(args[0])))
"""
CLIP_WATCHED = """\
from tools import watch


def main():
    torch.manual_seed(1)
    model = Model()
    seen = []
    watch(model, seen)
    with torch.no_grad():
        out = model(torch.randn(4, 2))
    return [out, *seen]
"""
CLIP_GRAD_HOOK = """\
def main():
    torch.manual_seed(1)
    model = Model()
    grads = []
    out = model(torch.randn(4, 2))
    out.register_hook(lambda g: grads.append(g))
    out.sum().backward()
    return [*grads, *(p.grad for p in model.parameters())]
"""


def _process_with(body: str, tools: str, fix: bool = False):
    """case.py (HEADER + body) checked in a run that also shows tools.py."""
    data = (HEADER + body).encode()
    with tempfile.TemporaryDirectory() as tmp:
        case, other = pathlib.Path(tmp, "case.py"), pathlib.Path(tmp, "tools.py")
        case.write_bytes(data)
        other.write_text(tools)
        index = build_index([str(case), str(other)])
        settings = Settings() if fix else Settings(select=("IPF1",))
        result = process_source(data, "case.py", settings, fix=fix, project=index, module_name="case")
    assert result.error is None, result.error
    return result


def _run_with_tools(source: str, tools: str) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        pathlib.Path(tmp, "tools.py").write_text(tools)
        sys.path.insert(0, tmp)
        try:
            sys.modules.pop("tools", None)
            return run(source)
        finally:
            sys.path.remove(tmp)
            sys.modules.pop("tools", None)


def test_a_hook_registered_by_a_helper_of_another_file_makes_the_forward_input_fix_unsafe():
    body = CLIP + CLIP_WATCHED
    found = [f for f in _process_with(body, WATCHER).findings if f.span.line - OFFSET == CLIP_WRITE_LINE]
    assert found and all(f.status is None or f.status.value != "safe" for f in found), found
    result = _process_with(body, WATCHER, fix=True)
    assert not result.changed, result.fixed
    # the rewrite would change what the hooks see
    got = _run_with_tools(HEADER + body, WATCHER)
    control = _run_with_tools(HEADER + CLIP_CONTROL + CLIP_WATCHED, WATCHER)
    assert any(not torch.equal(g, w) for g, w in zip(got, control))


def test_a_hook_in_a_file_the_case_is_not_linked_to_leaves_the_forward_input_fix_safe():
    body = CLIP + CLIP_GRAD_HOOK.replace("    out.register_hook(lambda g: grads.append(g))\n", "")
    found = [f for f in _process_with(body, WATCHER).findings if f.span.line - OFFSET == CLIP_WRITE_LINE]
    assert found and found[0].status is not None and found[0].status.value == "safe", found


def test_a_tensor_gradient_hook_leaves_the_forward_input_fix_safe():
    body = CLIP + CLIP_GRAD_HOOK
    assert raises_inplace(HEADER + body)
    found = [m for m in marks(body) if m[1] == CLIP_WRITE_LINE]
    assert found and found[0][2] == "safe", marks(body)
    result = fixed(body)
    assert "z = z / (z.abs()" in result
    want = run(HEADER + CLIP_CONTROL + CLIP_GRAD_HOOK)
    assert all(torch.equal(g, w) for g, w in zip(run(result), want))
