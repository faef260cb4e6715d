"""Summaries of user functions and modules (analysis/summaries.py), on real ``ast``: what a
callee saves, returns and mutates; chains of layers; ``inplace=`` values through constructors.
The in-place facts are measured with torch here, so they cannot drift from torch silently."""

from __future__ import annotations

import ast
import textwrap
from typing import Optional

import pytest

from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.analysis.summaries import INPLACE_SAVES_RESULT, Returns, Saved, Summary
from codemod.config import Settings
from codemod.engine.pipeline import process_source

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"


def model_of(code: str) -> SemanticModel:
    return SemanticModel(Source((HEADER + textwrap.dedent(code)).encode()))


def summary_at(code: str) -> Optional[Summary]:
    model = model_of(code)
    lines = model.source.text.splitlines()
    calls = [n for n in ast.walk(model.module) if isinstance(n, ast.Call)
             and "# <-" in lines[n.lineno - 1] and n is getattr(model.statement_of(n), "value", None)]
    assert len(calls) == 1, calls
    return model.summaries.of_call(calls[0])


LAYER_NORM = """
class LayerNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight)
"""

# (case, code with the call site on the `# <-` line, saves, output, returns, mutates)
CASES = [
    ("user_layernorm_saves_its_input", LAYER_NORM + """
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = LayerNorm(d)

    def forward(self, x):
        h = self.ln(x)  # <-
        return h
""", ("input0",), Saved.NO, Returns.FRESH, frozenset()),
    ("sigmoid_gate_saves_its_output", """
class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.proj = nn.Conv1d(c, c, 1)

    def forward(self, x):
        return torch.sigmoid(self.proj(x))


def run(x):
    g = Gate(4)(x)  # <-
    return g
""", ("input0", "output"), Saved.YES, Returns.FRESH, frozenset()),
    ("shift_saves_nothing", """
class Shift(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return x + self.bias


def run(x):
    shift = Shift(4)
    y = shift(x)  # <-
    return y
""", (), Saved.NO, Returns.FRESH, frozenset()),
    ("transitive_through_a_helper_function", """
def scale(x: torch.Tensor, w: torch.Tensor):
    return x * w


class Block(nn.Module):
    def forward(self, x, w):
        return scale(x, w)


def run(x, w):
    y = Block()(x, w)  # <-
    return y
""", ("input0", "input1"), Saved.NO, Returns.FRESH, frozenset()),
    ("returns_a_view_of_an_input_it_saved", """
def keep(x: torch.Tensor):
    y = x.exp()  # saves its output, not x
    z = torch.sin(x)  # saves x
    print(z)  # (handed on: a backward may reach sin's node)
    return x.view(-1)


def run(x):
    v = keep(x)  # <-
    return v
""", ("input0", "output"), Saved.YES, Returns.VIEW, frozenset()),
    ("drops_what_it_saved", """
def keep(x: torch.Tensor):
    z = torch.sin(x)  # saves x, but z is dropped: no backward reaches sin's node
    flag = (x * 2.0).sum() > 0  # saves nothing a backward reaches: a comparison
    return x.view(-1), flag


def run(x):
    v = keep(x)  # <-
    return v
""", (), Saved.NO, Returns.UNKNOWN, frozenset()),
    ("mutates_its_input", """
def add_pos(x, pos):
    x += pos
    return x


def run(x, pos):
    y = add_pos(x, pos)  # <-
    return y
""", (), Saved.NO, Returns.INPUT, frozenset({0})),
    ("hands_back_what_a_helper_hands_back", """
def add_pos(x, pos):
    x += pos
    return x


def outer(h, pos):
    return add_pos(h, pos).view(-1)


def run(x, pos):
    y = outer(x, pos)  # <-
    return y
""", (), Saved.NO, Returns.VIEW, frozenset({0})),
    ("grad_off_saves_nothing", """
@torch.no_grad()
def norm(x):
    return x / x.norm()


def run(x):
    y = norm(x)  # <-
    return y
""", (), Saved.NO, Returns.FRESH, frozenset()),
    ("product_of_unknowns_cannot_tell", """
def transform(coords, scale):
    return coords[:, 0] * scale


def run(coords, scale):
    y = transform(coords, scale)  # <-
    return y
""", None, Saved.NO, Returns.FRESH, frozenset()),
    ("conditional_activation_cannot_tell", """
class Ghost(nn.Module):
    def __init__(self, relu=True):
        super().__init__()
        self.relu = nn.ReLU() if relu else nn.Identity()

    def forward(self, x):
        return self.relu(x)


def run(x):
    y = Ghost(relu=False)(x)  # <-
    return y + Ghost(relu=True)(x)
""", None, Saved.UNKNOWN, Returns.UNKNOWN, frozenset()),
    ("conditional_activation_the_constructions_decide", """
class Ghost(nn.Module):
    def __init__(self, relu=True):
        super().__init__()
        self.relu = nn.ReLU() if relu else nn.Identity()

    def forward(self, x):
        return self.relu(x)


def run(x):
    y = Ghost(relu=False)(x)  # <-
    return y
""", (), Saved.NO, Returns.INPUT, frozenset()),  # (nn.Identity hands x back itself: stop 58)
    ("unseen_library_call_cannot_tell", """
import scipy


def wrap(x):
    return scipy.special.expit(x)


def run(x):
    y = wrap(x)  # <-
    return y
""", None, Saved.UNKNOWN, Returns.UNKNOWN, frozenset()),
]


@pytest.mark.parametrize("case,code,saves,output,returns,mutates", CASES, ids=[c[0] for c in CASES])
def test_summary(case, code, saves, output, returns, mutates):
    summary = summary_at(code)
    assert summary is not None
    assert summary.saves == saves
    assert summary.output is output
    assert summary.returns is returns
    assert summary.mutates == mutates


def test_recursion_is_cut_not_a_crash():
    summary = summary_at("""
def down(x, n):
    if n:
        return down(torch.tanh(x), n - 1)
    return x


def run(x):
    y = down(x, 3)  # <-
    return y
""")
    assert summary is not None and summary.returns is Returns.UNKNOWN


@pytest.mark.parametrize("code", [
    "def run(x):\n    y = torch.relu(x)  # <-\n    return y\n",  # a torch op: the op facts answer
    "def run(obj, x):\n    y = obj.blocks(x)  # <-\n    return y\n",  # cannot be resolved
    "def run(x):\n    f = g = None\n    y = f(x)  # <-\n    return y\n",
])
def test_no_summary_for_what_is_not_the_files_own(code):
    assert summary_at(code) is None


def findings(code: str):
    result = process_source((HEADER + textwrap.dedent(code)).encode(), "m.py", Settings())
    assert result.error is None
    return [(f.code, f.span.line - HEADER.count("\n"), f.message) for f in result.findings]


@pytest.mark.parametrize("case,code,flagged", [
    ("leaky_relu_in_place_then_dropout_in_place", """
net = nn.Sequential(
    nn.Linear(4, 4),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Dropout(0.25, inplace=True),
)
""", {5: "which ran in place and saved its result"}),
    ("dropout_in_place_after_conv_then_relu_in_place", """
net = nn.Sequential(
    nn.Conv2d(3, 4, 3),
    nn.Dropout(0.25, inplace=True),
    nn.ReLU(inplace=True),
)
""", {}),
    ("relu_in_place_after_a_layer_list_conv", """
def make(cfg):
    layers = []
    for v in cfg:
        conv = nn.Conv2d(3, v, 3)
        layers += [conv, nn.ReLU(inplace=True)]
    return nn.Sequential(*layers)
""", {}),
    ("relu_in_place_after_a_user_sigmoid_block", """
class Gate(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)


net = nn.Sequential(nn.Linear(4, 4), Gate(), nn.ReLU(inplace=True))
""", {7: "whose output autograd saves"}),
    ("constructor_default_false_passed_down", """
class Block(nn.Module):
    def __init__(self, inplace=True):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.ReLU(inplace=inplace))


class Net(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.block = Block(inplace=inplace)


net = Net()
""", {}),
    ("constructor_default_true_passed_down", """
class Block(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.ReLU(inplace=inplace))


class Net(nn.Module):
    def __init__(self, inplace=True):
        super().__init__()
        self.block = Block(inplace=inplace)


net = Net()
""", {5: "`torch.nn.Sigmoid` (line 9), whose output autograd saves"}),
], ids=lambda v: v if isinstance(v, str) and "\n" not in v else "")
def test_chains_and_inplace_values(case, code, flagged):
    got = {line: msg for c, line, msg in findings(code) if c.startswith("IPF1")}
    assert set(got) == set(flagged), got
    for line, words in flagged.items():
        assert words in got[line], got[line]


def test_user_module_that_saves_nothing_is_no_hazard_but_a_saving_one_is():
    quiet = """
class Shift(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return x + self.bias


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.shift = Shift(d)

    def forward(self, x):
        h = self.proj(x)
        h += self.shift(h)
        return h
"""
    assert [f for f in findings(quiet) if f[0].startswith("IPF1")] == []
    saving = quiet.replace("return x + self.bias", "return x * self.bias")
    found = [f for f in findings(saving) if f[0].startswith("IPF1")]
    assert [f[1] for f in found] == [19]
    assert "saved for backward by `Shift.forward via *" in found[0][2]


@pytest.mark.parametrize("code,kind", [
    ("q, k, v = x.chunk(3, dim=-1)", "tensor"),
    ("q, k = torch.split(x, 2)", "tensor"),
    ("q, k = x.unbind(0)", "tensor"),
    ("q, k = 'a,b'.split(',')", "unknown"),
    ("k, *q = x.chunk(3)", "unknown"),  # q is a list of the rest
    ("q, k = pair(x)", "tensor"),  # a helper of the file returning (x * 2, x.exp())
    ("k, q = pair_with_size(x)", "unknown"),
])
def test_unpacked_pieces_of_a_tensor_are_tensors(code, kind):
    helpers = ("def pair(x):\n    return x * 2, x.exp()\n\n\n"
               "def pair_with_size(x):\n    return x.exp(), x.size(0)\n\n\n")
    model = model_of(f"{helpers}def f():\n    x = torch.randn(4, 6)\n    {code}\n    return q\n")
    ret = [n for n in ast.walk(model.module) if isinstance(n, ast.Return)][-1]
    assert model.kind(ret.value).value == kind


@pytest.mark.parametrize("calls,kind", [
    ("g(torch.randn(3))\ng(torch.zeros(2))", "tensor"),
    ("g(torch.randn(3))\ng(3)", "unknown"),
    ("g(torch.randn(3))\nh = g", "unknown"),
    ("g(*args)", "unknown"),
])
def test_a_parameter_every_call_passes_a_tensor_is_a_tensor(calls, kind):
    model = model_of(f"def g(x):\n    return x\n\n\n{calls}\n")
    ret = next(n for n in ast.walk(model.module) if isinstance(n, ast.Return))
    assert model.kind(ret.value).value == kind


def test_inplace_saves_result_matches_torch():
    """Which ``inplace=True`` modules save their result: writing into it afterwards breaks
    backward for exactly these."""
    torch = pytest.importorskip("torch")
    from codemod import torch_api

    measured = set()
    for name in sorted(torch_api.INPLACE_PARAM_CALLABLES):
        short = name.rsplit(".", 1)[-1]
        if not name.startswith("torch.nn.") or not short[:1].isupper() or "Dropout" in short:
            continue
        cls = getattr(torch.nn, short, None)
        if cls is None:
            continue
        try:
            layer = cls(inplace=True)
        except TypeError:  # Threshold: required arguments first
            layer = cls(0.1, 0.0, inplace=True)
        x = torch.randn(2, 3, 4, requires_grad=True)
        y = layer(x * 1.0)
        y.mul_(2)
        try:
            y.sum().backward()
        except RuntimeError as e:
            assert "inplace operation" in str(e)
            measured.add(f"torch.nn.{short}")
    assert measured == set(INPLACE_SAVES_RESULT)


# ----------------------------------------------------------------- across the files of a run

LAYERS = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight)


def scale(x: torch.Tensor, w):
    return x * w
'''

BLOCK = '''import torch.nn as nn

from .layers import LayerNorm, scale


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = LayerNorm(d)
        self.attn = nn.Linear(d, d)
        self.proj = nn.Linear(d, d)

    def forward(self, x, w):
        h = self.proj(x)
        h += self.attn(self.ln(h))
        g = self.proj(h)
        g -= scale(g, w)
        return g
'''


def check_json(*paths, cwd):
    import json
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--format", "json", *map(str, paths)],
                         capture_output=True, text=True, cwd=cwd)
    assert run.returncode in (0, 1), run.stderr
    return {f["location"]["row"]: f["message"] for f in json.loads(run.stdout)["findings"]
            if f["filename"].endswith("block.py")}


@pytest.fixture
def package(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "layers.py").write_text(LAYERS)
    (pkg / "block.py").write_text(BLOCK)
    return tmp_path


def test_summaries_cross_files_through_the_project_index(package):
    together = check_json(package / "pkg", cwd=package)
    assert "saved for backward by `LayerNorm.forward via torch.nn.functional.layer_norm" in together[15]
    assert "saved for backward by `scale via *" in together[17]
    alone = check_json(package / "pkg" / "block.py", cwd=package)
    assert all("LayerNorm.forward" not in m and "scale via" not in m for m in alone.values())


def test_the_cache_follows_a_summary_in_another_file(package):
    assert 15 in check_json(package / "pkg", cwd=package)  # the cache is on by default
    layers = package / "pkg" / "layers.py"
    layers.write_text(LAYERS.replace("return F.layer_norm(x, self.weight.shape, self.weight)",
                                     "return x + self.weight"))
    assert "LayerNorm.forward" not in check_json(package / "pkg", cwd=package).get(15, "")


SEQUENTIAL_BLOCK = """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3), nn.ReLU(inplace=True))
        self.conv2 = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))

    def forward(self, x):
        out = self.conv1(x)
        out = self.conv2(out)
        out += x
        return out
"""


def test_a_sequential_attribute_is_summarized_from_its_members():
    """torchvision's video ResNet: `out = self.conv2(out); out += residual` after a Sequential
    ending in BatchNorm is no hazard; after one ending in an in-place ReLU it is."""
    assert [f for f in findings(SEQUENTIAL_BLOCK) if f[0].startswith("IPF1")] == []
    broken = SEQUENTIAL_BLOCK.replace("        out = self.conv2(out)\n", "")
    found = [f for f in findings(broken) if f[0].startswith("IPF1") and f[0] != "IPF102"]
    assert [f[1] for f in found] == [10]
    assert "the output of `nn.Sequential via torch.nn.ReLU (line 9)`" in found[0][2]


def test_cached_summaries_round_trip_and_a_bad_entry_is_a_miss(package, tmp_path):
    from codemod.engine.project import module_summaries

    paths = {"pkg.layers": str(package / "pkg" / "layers.py")}
    cache = tmp_path / "cache"
    wanted = frozenset({"LayerNorm", "scale"})
    first = module_summaries("pkg.layers", wanted, paths, str(cache), b"salt")
    assert set(first) == {"pkg.layers.LayerNorm", "pkg.layers.scale"} and first["pkg.layers.LayerNorm"].of == "class"
    entries = list((cache / "project").iterdir())
    assert len(entries) == 1
    assert module_summaries("pkg.layers", wanted, paths, str(cache), b"salt") == first  # from the cache
    entries[0].write_text('{"pkg.layers.scale": ["scale", ["maybe"], "no", "fresh", null, [], [], "function"]}')
    assert module_summaries("pkg.layers", wanted, paths, str(cache), b"salt") == first  # malformed: recomputed


def test_inplace_passed_from_another_file_is_not_read_as_the_default(tmp_path):
    """`inplace=False` by default and never built in its own file: no hazard there alone; built
    with `inplace=True` by another file of the run, the default says nothing."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "blocks.py").write_text(
        "import torch.nn as nn\n\n\nclass Block(nn.Module):\n    def __init__(self, inplace=False):\n"
        "        super().__init__()\n"
        "        self.net = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.ReLU(inplace=inplace))\n")
    (pkg / "use.py").write_text("from .blocks import Block\n\nnet = Block(inplace=True)\n")

    def hazards(*paths):
        import json
        import subprocess
        import sys

        run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--format", "json",
                              *map(str, paths)], capture_output=True, text=True, cwd=tmp_path)
        assert run.returncode in (0, 1), run.stderr
        return [f["message"] for f in json.loads(run.stdout)["findings"] if f["filename"].endswith("blocks.py")]

    assert hazards(pkg / "blocks.py") == []
    together = hazards(pkg)
    assert len(together) == 1 and "it follows `torch.nn.Sigmoid` (line 7), whose output autograd saves" in together[0]


MODULE_LIST = """
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x)


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(2)])

    def forward(self, x):
        h = self.proj(x)
        for blk in self.blocks:
            h += blk(h)
        return h
"""


def test_members_of_a_module_list_are_summarized():
    torch = pytest.importorskip("torch")
    scope: dict = {}
    exec(HEADER + MODULE_LIST, scope)  # the shape raises the error with torch
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        scope["Net"](4)(torch.randn(2, 4)).sum().backward()
    found = [f for f in findings(MODULE_LIST) if f[0].startswith("IPF1")]
    assert [f[1] for f in found] == [20]
    assert "saved for backward by `Block.forward via torch.nn.Linear" in found[0][2]
