"""Issue 24 (recall, rec24j): facts about what a module's input is, taken from its callers.

Group 1: an in-place activation that is the first layer of an ``nn.Sequential`` bound to a
name (``self.head = nn.Sequential(nn.ReLU(inplace=True), ...)``) writes into whatever
``self.head(h)`` is given. Where a call of the file hands it a tensor autograd saved (the output
of ``tanh``, or of a block whose forward ends in ``sigmoid``), the write is a proven hazard, as
it already was for a lone ``self.act = nn.ReLU(inplace=True)``.

Each program is a new small one written from the pattern; torch runs it to show it really
raises, and the fixed program's gradients are compared with the same program written out of
place. The negative controls (the Sequential handed a fresh sum or a convolution's output, whose
output nothing saves; an in-place layer that is not the first) run and stay unproven.
"""

from __future__ import annotations

import textwrap

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import changed_by_fix, raises_inplace, run_program

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
OFFSET = HEADER.count("\n")
INPLACE_ERROR = "modified by an inplace operation"


def marks(body: str, select=("IPF1",)):
    data = (HEADER + textwrap.dedent(body)).encode()
    result = process_source(data, "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line - OFFSET, f.status.value if f.status else None) for f in result.findings]


def run(source: str, name: str = "main"):
    return run_program(source, name)


def fixed(body: str, unsafe: bool = False) -> str:
    return changed_by_fix(HEADER + textwrap.dedent(body), Settings(unsafe_fixes=True) if unsafe else None)


def same(got: dict, want: dict) -> bool:
    return got.keys() == want.keys() and all(torch.allclose(got[k], want[k]) for k in want)


# ------------------------------------------------- group 1: the first layer of a named Sequential
SEQUENTIAL_AFTER_BLOCK = """\
class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.proj = nn.Linear(c, c)
        self.squash = nn.Sigmoid()

    def forward(self, x):
        return self.squash(self.proj(x))


class Tower(nn.Module):
    def __init__(self, c=6):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(c, c), Gate(c))
        self.head = nn.Sequential(
            nn.ELU(inplace=True),
            nn.Linear(c, 3),
        )

    def forward(self, x):
        features = self.trunk(x)
        return self.head(features)


def main():
    tower = Tower()
    tower(torch.randn(4, 6)).square().mean().backward()
    return {n: p.grad for n, p in tower.named_parameters()}


if __name__ == "__main__":
    main()
"""


def test_the_first_in_place_layer_of_a_sequential_handed_a_saved_output_is_proven_and_fixed():
    found = marks(SEQUENTIAL_AFTER_BLOCK)
    assert [(code, line) for code, line, _ in found] == [("IPF102", 16)], found
    source = HEADER + SEQUENTIAL_AFTER_BLOCK
    assert raises_inplace(source)
    got = run(fixed(SEQUENTIAL_AFTER_BLOCK))
    want = run(source.replace("nn.ELU(inplace=True)", "nn.ELU()"))
    assert same(got, want)


SEQUENTIAL_AFTER_TANH = """\
class Encoder(nn.Module):
    def __init__(self, c=5):
        super().__init__()
        self.inp = nn.Linear(c, c)
        self.out = nn.Sequential(nn.LeakyReLU(0.1, inplace=True), nn.Linear(c, 2))

    def forward(self, x):
        hidden = torch.tanh(self.inp(x))
        return self.out(hidden)


def main():
    enc = Encoder()
    enc(torch.randn(3, 5)).sum().backward()
    return {n: p.grad for n, p in enc.named_parameters()}
"""


def test_a_sequential_handed_a_tanh_output_is_proven():
    found = marks(SEQUENTIAL_AFTER_TANH)
    assert [(code, line) for code, line, _ in found] == [("IPF102", 5)], found
    assert raises_inplace(HEADER + SEQUENTIAL_AFTER_TANH)


# negative controls: the same Sequential handed what nothing saves
SEQUENTIAL_AFTER_CONV = """\
class Stage(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3, padding=1)
        self.bias = nn.Parameter(torch.zeros(c, 1))
        self.post = nn.Sequential(nn.ReLU(inplace=True), nn.Conv1d(c, c, 1))

    def forward(self, x):
        y = self.conv(x) + self.bias
        return self.post(y)


def main():
    stage = Stage()
    stage(torch.randn(2, 4, 7)).sum().backward()
    return {n: p.grad for n, p in stage.named_parameters()}
"""


def test_a_sequential_handed_an_unsaved_sum_stays_unproven():
    run(HEADER + SEQUENTIAL_AFTER_CONV)  # runs: nothing saved the sum
    assert marks(SEQUENTIAL_AFTER_CONV) == []


SEQUENTIAL_NOT_FIRST = """\
class Head(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.inp = nn.Linear(c, c)
        self.body = nn.Sequential(nn.Linear(c, c), nn.ReLU(inplace=True), nn.Linear(c, 1))

    def forward(self, x):
        return self.body(torch.sigmoid(self.inp(x)))


def main():
    head = Head()
    head(torch.randn(2, 4)).sum().backward()
    return {n: p.grad for n, p in head.named_parameters()}
"""


def test_an_in_place_layer_after_a_linear_is_silent_whatever_the_caller_hands():
    run(HEADER + SEQUENTIAL_NOT_FIRST)  # runs: the ReLU writes the Linear's fresh output
    assert marks(SEQUENTIAL_NOT_FIRST) == []


# ------------------------------------------------- group 2: a module attribute rebuilt in __init__
# `self.pos = nn.Conv1d(...)`, then `self.pos = weight_norm(self.pos)`, then
# `self.pos = nn.Sequential(self.pos, Trim(), nn.GELU())`: what `self.pos(...)` runs is the last
# of those straight-line assignments, and the Sequential's first member is the convolution (the
# weight-norm wrapper hands its module back), which saves its input.
REBUILT_POSITIONAL_CONV = """\
class Trim(nn.Module):
    def forward(self, x):
        return x[:, :, :-1]


class PosEncoder(nn.Module):
    def __init__(self, d=8, k=4):
        super().__init__()
        self.proj = nn.Linear(3, d)
        self.pos = nn.Conv1d(d, d, k, padding=k // 2, groups=2)
        self.pos = nn.utils.weight_norm(self.pos, name="weight", dim=2)
        self.pos = nn.Sequential(self.pos, Trim(), nn.GELU())
        self.norm = nn.LayerNorm(d)

    def forward(self, feats):
        x = self.proj(feats)
        pos = self.pos(x.transpose(1, 2)).transpose(1, 2)
        x += pos
        return self.norm(x)


def main():
    enc = PosEncoder()
    enc(torch.randn(2, 5, 3)).square().mean().backward()
    return {n: p.grad for n, p in enc.named_parameters()}
"""


def test_a_positional_conv_rebuilt_in_init_saves_its_input_and_the_residual_write_is_proven():
    found = marks(REBUILT_POSITIONAL_CONV)
    assert [(code, line) for code, line, _ in found] == [("IPF101", 18)], found
    source = HEADER + REBUILT_POSITIONAL_CONV
    assert raises_inplace(source)
    got = run(fixed(REBUILT_POSITIONAL_CONV))
    want = run(source.replace("x += pos", "x = x + pos"))
    assert same(got, want)


REBUILT_WITHOUT_WRAPPER = """\
class Mixer(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.mix = nn.Linear(d, d)
        self.mix = nn.Sequential(self.mix, nn.Tanh())

    def forward(self, x):
        h = self.inp(x)
        h += self.mix(h)
        return h


def main():
    m = Mixer()
    m(torch.randn(4, 6)).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
"""


def test_a_linear_wrapped_into_a_sequential_by_a_second_assignment_saves_its_input():
    found = marks(REBUILT_WITHOUT_WRAPPER)
    assert [(code, line) for code, line, _ in found] == [("IPF101", 10)], found
    assert raises_inplace(HEADER + REBUILT_WITHOUT_WRAPPER)


# negative controls: the rebuilt chain pads first (a fresh copy goes on), or another method
# may set the attribute again (what forward runs is not known)
REBUILT_PAD_FIRST = """\
class PadFirst(nn.Module):
    def __init__(self, d=8, k=3):
        super().__init__()
        self.proj = nn.Linear(3, d)
        self.pos = nn.Conv1d(d, d, k)
        self.pos = nn.Sequential(nn.ConstantPad1d(1, 0.0), self.pos)

    def forward(self, feats):
        x = self.proj(feats)
        x += self.pos(x.transpose(1, 2)).transpose(1, 2)
        return x


def main():
    m = PadFirst()
    m(torch.randn(2, 5, 3)).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
"""


def test_a_rebuilt_chain_that_pads_first_stays_silent():
    run(HEADER + REBUILT_PAD_FIRST)
    assert marks(REBUILT_PAD_FIRST) == []


REBUILT_ELSEWHERE = """\
class Swappable(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.mix = nn.Linear(d, d)
        self.mix = nn.Sequential(self.mix, nn.Tanh())

    def use_bias_only(self, d=6):
        self.mix = nn.Sequential(nn.Dropout(0.0), nn.Tanh())

    def forward(self, x):
        h = self.inp(x)
        h += self.mix(h)
        return h


def main():
    m = Swappable()
    m.use_bias_only()
    m(torch.randn(4, 6)).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
"""


def test_an_attribute_another_method_sets_again_stays_unproven():
    run(HEADER + REBUILT_ELSEWHERE)  # runs: the swapped-in chain saves nothing of h
    assert [code for code, _, _ in marks(REBUILT_ELSEWHERE)] == []


# ------------------------------------------------- group 3: a caller that rebinds the argument's name
# `x, feats = self.extract(x)`: the caller binds `x` to what the method returns, so it never reads
# the tensor it passed again; writing that argument in place is not what the caller relies on
# (the mutation contract), and the write, into a tensor the convolution saved, is a proven hazard.
REBOUND_FROM_RESULT = """\
class Encoder(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(3, d)
        self.pos = nn.Conv1d(d, d, 3, padding=1)

    def extract(self, x):
        x_conv = self.pos(x.transpose(1, 2)).transpose(1, 2)
        x += x_conv
        return x, x_conv

    def forward(self, feats):
        x = self.proj(feats)
        x, _ = self.extract(x)
        return torch.tanh(x)


def main():
    enc = Encoder()
    enc(torch.randn(2, 5, 3)).sum().backward()
    return {n: p.grad for n, p in enc.named_parameters()}
"""


def test_a_write_into_an_argument_the_caller_rebinds_from_the_result_is_proven_and_fixed():
    found = marks(REBOUND_FROM_RESULT)
    assert found == [("IPF101", 9, "unsafe")], found  # (param-mutation: the fix's tier is not this group's)
    source = HEADER + REBOUND_FROM_RESULT
    assert raises_inplace(source)
    got = run(fixed(REBOUND_FROM_RESULT, unsafe=True))
    want = run(source.replace("x += x_conv", "x = x + x_conv"))
    assert same(got, want)


# control: the caller reads the tensor it passed after the call (it sees the write): the mutation
# contract holds, so the hazard (real: the convolution saved `x`) is shown with no fix offered
READ_AFTER_THE_CALL = """\
class Encoder(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(3, d)
        self.pos = nn.Conv1d(d, d, 3, padding=1)

    def extract(self, x):
        x_conv = self.pos(x.transpose(1, 2)).transpose(1, 2)
        x += x_conv
        return x, x_conv

    def forward(self, feats):
        x = torch.tanh(self.proj(feats)).detach()
        y, _ = self.extract(x)
        return y + x
"""


def test_a_caller_that_reads_the_argument_after_the_call_keeps_the_mutation_contract_and_gets_no_fix():
    assert marks(READ_AFTER_THE_CALL) == [("IPF101", 9, "manual")]


# ------------------------------------------------- group 4: an in-place module a base class builds
# `self.drop = nn.Dropout(p, inplace=True)` in a base class's __init__, called only by a subclass's
# method (`self.drop(block(x))`): the calls of `self.drop` are the subclasses' too (where they do
# not set it again), and there it is handed a block's output that its final sigmoid saved.
BASE_CLASS_DROPOUT = """\
class Gated(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lin = nn.Linear(c, c)

    def forward(self, x):
        return torch.sigmoid(self.lin(x))


class Base(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.drop = nn.Dropout(p, inplace=True)

    def forward(self, x):
        return self.blocks(x).sum(-1)


class Net(Base):
    def __init__(self, c=5, p=0.3):
        super().__init__(p)
        self.first = Gated(c)
        self.out = nn.Linear(c, 1)

    def blocks(self, x):
        return self.out(self.drop(self.first(x)))


def main():
    net = Net()
    net(torch.randn(4, 5)).sum().backward()
    return {n: p.grad for n, p in net.named_parameters()}
"""


def test_an_in_place_dropout_of_a_base_class_called_by_a_subclass_is_proven_and_fixed():
    found = marks(BASE_CLASS_DROPOUT)
    assert [(code, line) for code, line, _ in found] == [("IPF102", 13)], found
    source = HEADER + BASE_CLASS_DROPOUT
    assert raises_inplace(source)
    got = run(fixed(BASE_CLASS_DROPOUT))
    want = run(source.replace("nn.Dropout(p, inplace=True)", "nn.Dropout(p)"))
    assert same(got, want)


# negative control: the subclass sets `self.drop` again (to a layer that is not in place): its
# calls run that one, not the base's
SUBCLASS_REPLACES_IT = BASE_CLASS_DROPOUT.replace(
    "        self.first = Gated(c)\n", "        self.first = Gated(c)\n        self.drop = nn.Dropout(p)\n")


def test_a_subclass_that_sets_the_attribute_again_does_not_lend_its_calls():
    assert "self.drop = nn.Dropout(p)\n" in SUBCLASS_REPLACES_IT
    run(HEADER + SUBCLASS_REPLACES_IT)
    assert marks(SUBCLASS_REPLACES_IT) == []


# ------------------------------------------------- group 5: an argument rebound through a composite functional
# `x = F.normalize(x, dim=-1)` in a loss helper: the value is still computed from the argument
# (normalize, pad, interpolate, the norms and the losses of torch.nn.functional are
# differentiable in their input), so the own-gradient save of `norm` on it is proven, as it is
# without the rebinding.
ANGLE_LOSS = """\
import torch.nn.functional as F


def angle_loss(x, y):
    x = F.normalize(x, dim=-1)
    y = F.normalize(y, dim=-1)
    d = (x - y).norm(dim=-1)
    d.div_(2)
    return d.arcsin().pow(2).mul(2)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 8)

    def forward(self, x):
        return self.lin(x)


def main():
    head = Head()
    angle_loss(head(torch.randn(3, 4)), torch.randn(3, 8)).mean().backward()
    return {n: p.grad for n, p in head.named_parameters()}
"""


def test_an_own_gradient_save_on_an_argument_rebound_through_normalize_is_proven_and_fixed():
    found = marks(ANGLE_LOSS)
    assert [(code, line) for code, line, _ in found] == [("IPF103", 8)], found
    source = HEADER + ANGLE_LOSS
    assert raises_inplace(source)
    got = run(fixed(ANGLE_LOSS))
    want = run(source.replace("    d.div_(2)\n", "    d = d.div(2)\n"))
    assert same(got, want)


# negative control: every call of the helper in the file passes fresh tensors (no grad anywhere)
ANGLE_ON_CONSTANTS = """\
import torch.nn.functional as F


def angle_loss(x, y):
    x = F.normalize(x, dim=-1)
    y = F.normalize(y, dim=-1)
    d = (x - y).norm(dim=-1)
    d.div_(2)
    return d.arcsin().pow(2).mul(2)


def main():
    return {"angle": angle_loss(torch.randn(3, 8), torch.randn(3, 8))}
"""


def test_the_helper_called_only_on_fresh_tensors_stays_unproven():
    run(HEADER + ANGLE_ON_CONSTANTS)
    assert marks(ANGLE_ON_CONSTANTS) == []


# the same fact for the grad requirement: a layer's output passed through `F.normalize` still requires grad
NORMALIZED_LAYER_OUTPUT = """\
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    lin = nn.Linear(4, 8)
    h = F.normalize(lin(torch.randn(3, 4)), dim=-1)
    d = h.norm(dim=-1)
    d.div_(2)
    d.sum().backward()
    return {n: p.grad for n, p in lin.named_parameters()}
"""


def test_a_layer_output_through_normalize_requires_grad():
    found = marks(NORMALIZED_LAYER_OUTPUT)
    assert [(code, line) for code, line, _ in found] == [("IPF103", 9)], found
    source = HEADER + NORMALIZED_LAYER_OUTPUT
    assert raises_inplace(source)
    got = run(fixed(NORMALIZED_LAYER_OUTPUT))
    want = run(source.replace("    d.div_(2)\n", "    d = d.div(2)\n"))
    assert same(got, want)


# control: the name is rebound from the result, but a list still holds the tensor passed (a loop's
# element, read again through the list): the caller relies on the write, no fix is offered
TILES_IN_A_LIST = """\
def blend(a, b):
    b[:, 0] = a[:, -1] * 0.5 + b[:, 0] * 0.5
    return b


def stitch(tiles):
    out = []
    for j, tile in enumerate(tiles):
        if j > 0:
            tile = blend(tiles[j - 1], tile)
        out.append(tile)
    return torch.cat(out, dim=1), tiles
"""


def test_a_rebound_name_whose_tensor_a_list_still_holds_keeps_the_mutation_contract():
    assert [status for _, line, status in marks(TILES_IN_A_LIST, ("ALL",)) if line == 2] == ["skipped"]


# ------------------------------------------------- group 6: the grad switched on inside an assignment
# `cfg.adjacency = A.requires_grad_(True)` (or `B = A.requires_grad_()`): the statement switches
# the grad requirement of `A`'s tensor on as surely as `A.requires_grad_(True)` on a line of its
# own; a later write into `A` is PyTorch's leaf error.
SWITCHED_IN_ASSIGNMENT = """\
class Config:
    pass


def build_adjacency(n, pairs, cfg):
    A = torch.zeros(n, n).float()
    for i, j in pairs:
        A[i, j] = 1
    cfg.adjacency = A.requires_grad_(True)
    for i, j in pairs:
        A[j, i] = 1
    return A


def main():
    cfg = Config()
    A = build_adjacency(4, [(0, 1), (1, 2), (2, 3)], cfg)
    w = torch.randn(4, requires_grad=True)
    (A @ w).pow(2).sum().backward()
    return {"A": A.grad, "w": w.grad, "adj": A.detach()}
"""


def test_a_write_after_the_grad_is_switched_on_in_an_assignment_is_proven():
    found = marks(SWITCHED_IN_ASSIGNMENT)
    assert [(code, line) for code, line, _ in found] == [("IPF105", 11)], found
    source = HEADER + SWITCHED_IN_ASSIGNMENT
    try:
        run(source)
    except RuntimeError as error:
        assert "leaf Variable that requires grad" in str(error)
    else:
        raise AssertionError("the program ran")


# negative control: the switch turns the grad off (`requires_grad_(False)`): the write is allowed
SWITCHED_OFF_IN_ASSIGNMENT = SWITCHED_IN_ASSIGNMENT.replace("A.requires_grad_(True)", "A.requires_grad_(False)")


def test_a_switch_off_in_an_assignment_stays_silent():
    assert "requires_grad_(False)" in SWITCHED_OFF_IN_ASSIGNMENT
    run(HEADER + SWITCHED_OFF_IN_ASSIGNMENT)
    assert marks(SWITCHED_OFF_IN_ASSIGNMENT) == []


# negative control (also for the statement form): a tensor that requires grad written into the
# fresh tensor before the switch makes it a non-leaf (CopySlices); PyTorch then allows the write
WRITTEN_FROM_GRAD_BEFORE_THE_SWITCH = """\
def build(n, w):
    A = torch.zeros(n, n).float()
    A[1, 0] = w.sum()
    A.requires_grad_(True)
    A[0, 1] = 1
    return A


def main():
    w = torch.randn(3, requires_grad=True)
    build(3, w).sum().backward()
    return {"w": w.grad}
"""


def test_a_tensor_made_a_non_leaf_before_the_switch_is_not_a_proven_leaf():
    run(HEADER + WRITTEN_FROM_GRAD_BEFORE_THE_SWITCH)  # runs: `A` is no leaf
    assert marks(WRITTEN_FROM_GRAD_BEFORE_THE_SWITCH) == []


# ------------------------------------------------- group 7: a caller hands a refused view to a writing callee
# `left, right = h.chunk(2, dim=-1)` then `self.a(left)`, whose forward starts with
# `self.act(x)`, an `nn.ReLU(inplace=True)`: the write goes into an output of `chunk`, which
# PyTorch refuses to modify in place when it requires grad ("... is a view and is being modified
# inplace. This view is the output of a function that returns multiple views").
CHUNK_INTO_BLOCKS = """\
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return self.lin(self.act(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(3, 8)
        self.a = Block(4)
        self.b = Block(4)

    def forward(self, x):
        h = self.enc(x)
        left, right = h.chunk(2, dim=-1)
        return self.a(left) * self.b(right)


def main():
    net = Net()
    net(torch.randn(5, 3)).sum().backward()
    return {n: p.grad for n, p in net.named_parameters()}
"""


def raises_view_error(source: str) -> bool:
    return raises_inplace(source, message="is a view and is being modified inplace")


def test_an_in_place_activation_handed_a_chunk_output_by_its_caller_is_proven_and_fixed():
    found = marks(CHUNK_INTO_BLOCKS)
    assert [(code, line) for code, line, _ in found] == [("IPF102", 4)], found
    source = HEADER + CHUNK_INTO_BLOCKS
    assert raises_view_error(source)
    got = run(fixed(CHUNK_INTO_BLOCKS))
    want = run(source.replace("nn.ReLU(inplace=True)", "nn.ReLU()"))
    assert same(got, want)


# negative controls: the caller hands copies, or a chunk of what requires no grad
CLONED_INTO_BLOCKS = CHUNK_INTO_BLOCKS.replace("self.a(left) * self.b(right)", "self.a(left.clone()) * self.b(right.clone())")
CHUNK_OF_CONSTANT = CHUNK_INTO_BLOCKS.replace("h = self.enc(x)", "h = torch.cat([x, x, x[:, :2]], dim=-1)").replace(
    "self.a(left) * self.b(right)", "self.a(left) * right * self.enc(x)[:, :4]")


def test_an_in_place_activation_handed_copies_or_unrecorded_chunks_stays_silent():
    assert CLONED_INTO_BLOCKS != CHUNK_INTO_BLOCKS and CHUNK_OF_CONSTANT != CHUNK_INTO_BLOCKS
    for source in (CLONED_INTO_BLOCKS, CHUNK_OF_CONSTANT):
        run(HEADER + source)
        assert marks(source) == [], source


# control: a `return` before the last assignment may leave the earlier value (a plain convolution
# behind a padding layer here): what forward runs is not known, the write stays unproven
REBUILT_AFTER_AN_EARLY_RETURN = """\
class MaybeWrapped(nn.Module):
    def __init__(self, d=6, plain=True):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.mix = nn.Sequential(nn.ConstantPad1d((0, 0), 0.0), nn.Linear(d, d))
        if plain:
            return
        self.mix = nn.Sequential(nn.Linear(d, d), nn.Tanh())

    def forward(self, x):
        h = self.inp(x)
        h += self.mix(h)
        return h


def main():
    m = MaybeWrapped()
    m(torch.randn(4, 6)).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
"""


def test_an_attribute_set_again_after_an_early_return_is_not_known():
    run(HEADER + REBUILT_AFTER_AN_EARLY_RETURN)  # runs: the pad copies `h` before the linear saves it
    assert marks(REBUILT_AFTER_AN_EARLY_RETURN) == []


# ------------------------------------------------- group 8: a ModuleList built from a list of appends
# `layers = []; for ...: layers.append(Unit(c)); self.layers = nn.ModuleList(layers)`: every
# member is a `Unit`, whose forward ends in a ReLU that saves its output, so
# `self.drop(self.layers[i](x))` with an in-place dropout writes into a saved tensor.
MODULE_LIST_OF_APPENDS = """\
class Unit(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lin = nn.Linear(c, c)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.lin(x))


class Stack(nn.Module):
    def __init__(self, c=4, n=2):
        super().__init__()
        self.drop = nn.Dropout(0.1, inplace=True)
        layers = []
        for i in range(n):
            layers.append(Unit(c))
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.drop(self.layers[i](x))
        return x


def main():
    stack = Stack()
    stack(torch.randn(3, 4)).sum().backward()
    return {n: p.grad for n, p in stack.named_parameters()}
"""


def test_an_in_place_dropout_after_a_member_of_a_module_list_built_by_appends_is_proven():
    found = marks(MODULE_LIST_OF_APPENDS)
    assert [(code, line) for code, line, _ in found] == [("IPF102", 14)], found
    assert raises_inplace(HEADER + MODULE_LIST_OF_APPENDS)


# negative control: the list is handed to another function before the ModuleList is built (its
# members are then not known), and one member class saves nothing of its output
MODULE_LIST_HANDED_ON = MODULE_LIST_OF_APPENDS.replace(
    "        self.layers = nn.ModuleList(layers)", "        register(layers)\n        self.layers = nn.ModuleList(layers)"
).replace("class Stack(nn.Module):", "def register(layers):\n    layers.append(nn.Linear(4, 4))\n\n\nclass Stack(nn.Module):")


def test_a_module_list_of_a_list_handed_on_is_not_followed():
    assert "register(layers)" in MODULE_LIST_HANDED_ON
    assert [code for code, _, _ in marks(MODULE_LIST_HANDED_ON)] == []
