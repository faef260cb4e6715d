"""Issue 24 (recall, rec24h): the `op=` misses.

Layers run from a loop whose target unpacks each row of a ``nn.ModuleList`` of
``nn.ModuleList([mix, mlp])`` rows (``for mix, mlp in self.layers``), or zips two lists of layers
(``for mix, mlp in zip(self.mixers, self.mlps)``): the calls in the loop's body had no summary,
so a block that saves its input (a pre-norm's LayerNorm) was a call the analysis could not see
into, and an ``h += self.pos`` on the block's input, called twice on the caller's tensor, went
unproven.

Each program here is a new small one written from the pattern; torch runs it to show the hazard
is real, and the fixed program's gradients are compared with an out-of-place control. The
negative controls keep the same shape where the write is harmless.
"""

from __future__ import annotations

import textwrap

import torch

from codemod.config import Settings
from codemod.engine.pipeline import fix_source, process_source
from tests.programs import run_program

from .backward import raises_at_backward

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
OFFSET = HEADER.count("\n")


def _source(body: str) -> str:
    return HEADER + textwrap.dedent(body)


def found(body: str, select=("IPF1",)):
    result = process_source(_source(body).encode(), "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line - OFFSET, f.status.value if f.status else None) for f in result.findings]


def _run(source: str, name: str = "grads"):
    return run_program(source, name, seed=None)


def _fixed(body: str, unsafe: bool = False) -> str:
    result = fix_source(_source(body).encode(), "case.py", Settings(unsafe_fixes=unsafe))
    assert result.error is None, result.error
    assert result.fixed is not None
    return result.fixed


# ----------------------------------------------------------------- rows of layers unpacked in a loop
BLOCKS = """\
class PreNorm(nn.Module):
    def __init__(self, d, fn):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.norm(x))


class Scaled(nn.Module):
    def forward(self, x):
        return x * 0.5


class Stack(nn.Module):
    def __init__(self, d, depth):
        super().__init__()
{build}

    def forward(self, x):
        for mix, mlp in {rows}:
            x = mix(x) + x
            x = mlp(x) + x
        return x


class Decoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.pos = nn.Parameter(torch.linspace(0, 1, 3 * d).view(1, 3, d), requires_grad=False)
        self.stack = Stack(d, 2)

    def forward(self, h):
        h += self.pos
        return self.stack(h)


def grads():
    torch.manual_seed(0)
    enc = nn.Linear(4, 4)
    first = Decoder(4)
    second = Decoder(4)
    z = enc(torch.randn(2, 3, 4))
{calls}
    return enc.weight.grad
"""


def _write(body: str) -> int:
    return body.splitlines().index("        h += self.pos") + 1

NESTED = """\
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([{a}, {b}]))"""
ZIPPED = """\
        self.mixers = nn.ModuleList([{a} for _ in range(depth)])
        self.mlps = nn.ModuleList([{b} for _ in range(depth)])"""
SAVING = ("PreNorm(d, nn.Linear(d, d))", "PreNorm(d, nn.Tanh())")
PLAIN = ("Scaled()", "Scaled()")
TWICE = "    (first(z).pow(2).sum() + second(z).pow(2).sum()).backward()"  # both decoders read z
ONCE = "    (first(z).pow(2).sum() + second(enc(z.detach() + 1)).pow(2).sum()).backward()"


def _program(build: str, rows: str, layers=SAVING, calls=TWICE) -> str:
    return BLOCKS.format(build=build.format(a=layers[0], b=layers[1]), rows=rows, calls=calls)


def _control(program: str) -> str:
    return program.replace("        h += self.pos", "        h = h + self.pos")


CASES = [(NESTED, "self.layers"), (ZIPPED, "zip(self.mixers, self.mlps)")]


def test_rows_of_layers_unpacked_in_a_loop_save_the_block_input():
    for build, rows in CASES:
        body = _program(build, rows)
        assert raises_at_backward(lambda: _run(_source(body))), rows
        assert ("IPF101", _write(body), "unsafe") in found(body), rows  # param-mutation: the caller's tensor


def test_the_fix_gives_the_out_of_place_gradients():
    for build, rows in CASES:
        body = _program(build, rows)
        fixed = _fixed(body, unsafe=True)
        assert "h = h + self.pos" in fixed
        assert torch.equal(_run(fixed), _run(_source(_control(body)))), rows


def test_no_proven_hazard_where_the_layers_save_nothing_of_their_input():
    for build, rows in CASES:
        body = _program(build, rows, layers=PLAIN)
        _run(_source(body))  # backward runs
        assert not [f for f in found(body) if f[1] == _write(body)], rows


def test_no_proven_hazard_where_each_decoder_gets_a_tensor_of_its_own():
    for build, rows in CASES:
        body = _program(build, rows, calls=ONCE)
        _run(_source(body))  # backward runs
        assert not [f for f in found(body) if f[1] == _write(body)], rows


def test_rows_of_another_width_or_of_mixed_classes_stay_unseen():
    # a zip over members of two classes: zip may stop before either, so neither is proven to run
    mixed = ZIPPED.replace("nn.ModuleList([{a} for _ in range(depth)])", "nn.ModuleList([{a}, Scaled()])")
    body = _program(mixed, "zip(self.mixers, self.mlps)")
    assert not [f for f in found(body) if f[1] == _write(body)]
    # rows of three layers unpacked into two names: no row is read
    wide = NESTED.replace("[{a}, {b}]", "[{a}, {b}, Scaled()]")
    body = _program(wide, "self.layers")
    assert not [f for f in found(body) if f[1] == _write(body)]


# ----------------------------------------------------------------- an activation chosen by constructor arguments
CONV_ACT = """\
import torch.nn.functional as F


class ConvAct(nn.Module):
    def __init__(self, cin, cout, norm=None, act=None, nl="relu"):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm = nn.BatchNorm2d(cout) if norm is not None else None
        if act is None:
            self.act = None
        elif nl == "relu":
            self.act = nn.ReLU()
        else:
            self.act = nn.PReLU()

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.act is not None:
            x = self.act(x)
        return x


class Head(nn.Module):
    def __init__(self, c):
        super().__init__()
        cfg = dict(kind="act")
        self.proj = ConvAct(c, c, {args})
        self.out = nn.Conv2d(c, 1, 1)

    def forward(self, x, bias):
        x = self.proj(x)
        x += bias
        return self.out(x)


def grads():
    torch.manual_seed(0)
    head = Head(3)
    head(torch.randn(2, 3, 5, 5), torch.randn(1, 3, 1, 1)).pow(2).sum().backward()
    return head.proj.conv.weight.grad
"""


def _conv_act(args: str) -> str:
    return CONV_ACT.format(args=args)


def _line(body: str, text: str) -> int:
    return body.splitlines().index(text) + 1


def test_an_activation_the_constructor_arguments_choose_is_seen():
    for args in ("act=cfg", "norm=cfg, act=cfg", "act=cfg, nl='relu'"):
        body = _conv_act(args)
        assert raises_at_backward(lambda: _run(_source(body))), args
        assert [f[:2] for f in found(body)] == [("IPF101", _line(body, "        x += bias"))], args
        fixed = _fixed(body, unsafe=True)
        control = _source(body.replace("        x += bias", "        x = x + bias"))
        assert torch.equal(_run(fixed), _run(control)), args


def test_no_proven_hazard_where_the_arguments_leave_the_activation_out_or_it_saves_no_output():
    # act not given: the block returns the convolution's output (not saved); PReLU saves its input only
    for args in ("norm=cfg", "act=None", "act=cfg, nl='prelu'"):
        body = _conv_act(args)
        _run(_source(body))  # backward runs
        assert found(body) == [], args


def test_a_constructor_argument_passed_through_super_init_decides_too():
    body = _conv_act("act=cfg").replace(
        "class Head(nn.Module):", "class Wide(ConvAct):\n    def __init__(self, c, act):\n"
        "        super().__init__(c, c, None, act)\n\n\nclass Head(nn.Module):").replace(
        "self.proj = ConvAct(c, c, act=cfg)", "self.proj = Wide(c, None)")
    _run(_source(body))  # the subclass passes act=None: no activation, backward runs
    assert found(body) == []  # (the default of `act` alone would not decide it either way)
    hit = body.replace("self.proj = Wide(c, None)", "self.proj = Wide(c, cfg)")
    assert raises_at_backward(lambda: _run(_source(hit)))
    assert [f[:2] for f in found(hit)] == [("IPF101", _line(hit, "        x += bias"))]


# ----------------------------------------------------------------- `op=` on an element of a list of activations
PYRAMID = """\
import torch.nn.functional as F


class Lateral(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1)
        self.act = nn.ReLU()

    def forward(self, x):
        return {ret}


class Pyramid(nn.Module):
    def __init__(self, chans, cout):
        super().__init__()
        self.lats = nn.ModuleList([Lateral(c, cout) for c in chans])
        self.smooth = nn.ModuleList()
        for c in chans:
            self.smooth.append(nn.Conv2d(cout, cout, 3, padding=1))

    def forward(self, feats):
        levels = [lat(feats[i]) for i, lat in enumerate(self.lats)]
{hold}        for i in range(len(levels) - 1, 0, -1):
            levels[i - 1] += F.interpolate(levels[i], size=levels[i - 1].shape[-2:])
        return [self.smooth[i](levels[i]) for i in range(len(levels))]


def grads():
    torch.manual_seed(0)
    net = Pyramid([2, 3, 4], 4)
    feats = [torch.randn(1, c, s, s) for c, s in ((2, 8), (3, 4), (4, 2))]
    sum(o.pow(2).mean() for o in net(feats)).backward()
    return torch.cat([p.grad.flatten() for p in net.parameters()])
"""
WRITE_LEVEL = "            levels[i - 1] += F.interpolate(levels[i], size=levels[i - 1].shape[-2:])"
OUT_OF_PLACE = "            levels[i - 1] = levels[i - 1] + F.interpolate(levels[i], size=levels[i - 1].shape[-2:])"


def test_an_element_of_a_list_of_activations_written_in_place():
    body = PYRAMID.format(ret="self.act(self.conv(x))", hold="")
    assert raises_at_backward(lambda: _run(_source(body)))
    assert found(body) == [("IPF101", _line(body, WRITE_LEVEL), "safe")]
    fixed = _fixed(body)  # the default fix: a new tensor in the list's slot
    assert OUT_OF_PLACE in fixed
    assert torch.equal(_run(fixed), _run(_source(body.replace(WRITE_LEVEL, OUT_OF_PLACE))))


def test_no_proven_hazard_where_the_elements_are_not_saved():
    body = PYRAMID.format(ret="self.conv(x)", hold="")
    _run(_source(body))  # a convolution does not save its output: backward runs
    assert found(body) == []
    assert [f[0] for f in found(body, select=("ALL",))] == ["IPF001"]  # still a candidate, unproven


def test_an_element_held_by_another_name_makes_the_fix_unsafe():
    body = PYRAMID.format(ret="self.act(self.conv(x))", hold="        top = levels[0]\n").replace(
        "        return [self.smooth", "        print(top.shape)\n        return [self.smooth")
    assert found(body) == [("IPF101", _line(body, WRITE_LEVEL), "unsafe")]


def test_a_list_slot_rebound_before_is_possible_not_proven():
    """Slot 0 is rebound to ``levels[0] * 2`` (a product by a number saves nothing of its own):
    the write into it is fine, the writes into the other slots raise (run). Not every value a
    slot may hold is a saved result, so the write is possible (IPF201), not proven (stop 43's
    list-slot facts; before, the list was given up and nothing was reported)."""
    body = PYRAMID.format(ret="self.act(self.conv(x))", hold="        levels[0] = levels[0] * 2\n")
    assert raises_at_backward(lambda: _run(_source(body)))
    assert found(body) == []
    assert [f[0] for f in found(body, select=("ALL",)) if f[1] == _line(body, WRITE_LEVEL)] == ["IPF201"]


def test_the_result_of_a_block_whose_output_is_saved_is_a_tensor_the_default_fix_rewrites():
    body = _conv_act("act=cfg")
    assert found(body) == [("IPF101", _line(body, "        x += bias"), "safe")]
    fixed = _fixed(body)  # the default fix
    assert "        x = x + bias" in fixed
    assert torch.equal(_run(fixed), _run(_source(body.replace("        x += bias", "        x = x + bias"))))
