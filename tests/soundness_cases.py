"""Rewrites that must not verify, and rewrites that must: the cases of issue 12.

Each case is a small program (``model.py``, sometimes with a sibling file), a rewrite given as
text edits on it, and the target. ``WRONG`` rewrites change what the program computes (or
cannot be judged): each must give ``not verified`` or ``unproven``. ``RIGHT`` rewrites keep it
and must give ``verified``. ``bullet`` names the line of the issue's "Why" the case stands for.
Kept as data so that ``bench/verify_isolation.py`` can count how the old harness judged them.
"""

from __future__ import annotations

import textwrap
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple


class Case(NamedTuple):
    id: str
    bullet: str
    source: str
    edits: Sequence[Tuple[str, str]]  # (old, new) replacements that make the rewrite
    name: str = "fn"
    options: Optional[dict] = None  # keywords for verify()
    files: Optional[Dict[str, str]] = None  # sibling files

    def original(self) -> str:
        return textwrap.dedent(self.source)

    def rewritten(self) -> str:
        text = self.original()
        for old, new in self.edits:
            assert old in text, f"{self.id}: {old!r} not in the source"
            text = text.replace(old, new)
        return text


SGD = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
x = torch.randn(4, 3)

def fn():
    loss = model(x).pow(2).sum()
    loss.backward()
    for p in model.parameters():
        p.add_(p.grad, alpha=-0.1)
    return loss
"""

RESET = """
import torch
h = torch.ones(3, requires_grad=True)
c = torch.ones(3, requires_grad=True)

def fn():
    out = (h * 2 + c).sum()
    out.backward()
    for state in (h, c):
        state.zero_()
    return out
"""

INDEX_COPY = """
import torch

def fn():
    c = torch.zeros(4, requires_grad=True)
    src = torch.tensor([1.0, 2.0])
    c.index_copy_(0, torch.tensor([0, 2]), src)
    y = (c * 3).sum()
    y.backward()
    return c.grad, c.detach()
"""

VIEW = """
import torch

def fn():
    x = torch.randn(4, 2, requires_grad=True)
    a, b = (x * 2).split(2)
    a.mul_(2)
    return a.sum() + b.sum()
"""

VIEW_BASE_READ = """
import torch

def fn():
    x = torch.randn(4, 2, requires_grad=True)
    h = x * 2
    a, b = h.split(2)
    a.mul_(2)
    return a.sum() + b.sum() + h.sum()
"""

LEAF_UNFIT = """
import torch

def fn():
    w = torch.ones(3, requires_grad=True)
    y = w * 2
    w.add_(1)
    return y + w
"""

NORMALISE_INPUT = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        x.sub_(x.mean())
        return self.fc(x)

def example_inputs():
    return (torch.randn(2, 3),)
"""

EMA = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("ema", torch.zeros(3))

    def forward(self, x):
        y = self.fc(x)
        ema = self.ema
        with torch.no_grad():
            ema.mul_(0.9).add_(y.mean(0), alpha=0.1)
        return y

def example_inputs():
    return (torch.randn(2, 3),)
"""

COUNTER = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("count", torch.zeros((), dtype=torch.long))
        self.calls = 0

    def forward(self, x):
        self.count += 1
        self.calls += 1
        return self.fc(x)

def example_inputs():
    return (torch.randn(2, 3),)
"""

TWO_BUFFERS = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("m1", torch.ones(3))
        self.register_buffer("m2", torch.ones(3))

    def forward(self, x):
        for m in (self.m1, self.m2):
            m.mul_(0.9)
        return self.fc(x)

def example_inputs():
    return (torch.randn(2, 3),)
"""

OPT_STEP = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(4, 3)

def fn():
    opt.zero_grad()
    loss = model(x).pow(2).sum()
    loss.backward()
    opt.step()
    return model.weight.sum().detach()
"""

FLOAT_OUT = """
import torch

def fn():
    w = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(w)
    y = y * 2
    return float(y.sum()), w
"""

DATA_OUT = """
import dataclasses
import collections
import torch

@dataclasses.dataclass
class Out:
    loss: torch.Tensor
    scale: float

Pair = collections.namedtuple("Pair", "first second")

class ModelOutput(collections.OrderedDict):
    pass

def fn():
    w = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(w)
    y = y * 2
    return {"loss": y.sum(), "out": Out(y, 0.5), "pair": Pair(y, 1), "mo": ModelOutput(logits=y)}
"""

PRE_GRAD = """
import torch
w = torch.ones(3, requires_grad=True)
w.grad = torch.zeros(3)

def fn():
    y = torch.sigmoid(w)
    y += 1
    return y
"""

NUMERIC = """
import torch

def fn():
    w = torch.linspace(0.5, 1.5, 4, dtype=torch.float64, requires_grad=True)
    a = torch.exp(w)
    a = a * 3.0
    z = torch.complex(torch.randn(3), torch.randn(3))
    idx = torch.arange(10**6, 10**6 + 3)
    half = torch.ones(3, dtype=torch.float16)
    f32 = torch.linspace(1.0, 2.0, 3)
    flags = torch.tensor([True, False, True])
    return a, z, idx, half, f32, flags
"""

MODES = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("step", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        y = self.fc(x)
        self.step += 1
        if self.step > 1:
            y = y * 2
        if not self.training:
            return y * 0.5
        return y

def example_inputs():
    return (torch.randn(2, 3),)
"""

BUGGY = """
import torch

def fn():
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    return y
"""

SCRIPTED = """
import torch

@torch.jit.script
def act(x):
    return torch.sigmoid(x) * 2

def fn():
    x = torch.randn(3, requires_grad=True)
    y = torch.exp(act(x))
    y += 1
    return y
"""

GENERATOR = """
import torch
g = torch.Generator().manual_seed(0)
noise = torch.randn(3, generator=g)

def fn():
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x + noise + torch.randn(3, generator=g))
    y += 1
    return y
"""

HALF_PARAM = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3, dtype=torch.float16))

    def forward(self, x):
        return x * self.scale.float()

def example_inputs():
    return (torch.randn(2, 3),)
"""

NOTHING = """
import torch

def fn():
    w = torch.ones(3)
    return "done"
"""

OTHER_FAILURE = """
import torch

def fn():
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    raise ValueError("the original fails for another reason")
"""

BLOG = """
import torch

def fn():
    a = torch.tensor([1.0, 3.0], requires_grad=True)
    c = torch.tensor([2.0, 4.0], requires_grad=True)
    b = a ** 2 * c ** 2
    b += 1
    b *= c + a
    d = b.exp_()
    d *= 5
    b.backward(torch.tensor([1.0, 1.0]))
    return a, c
"""

HELPER = {"helper.py": """
import torch

def gate(x):
    return torch.sigmoid(x)
"""}

SIBLING = """
import torch
from helper import gate

def fn():
    x = torch.randn(3, requires_grad=True)
    y = gate(x)
    y += 1
    return y
"""

HB = """
import torch

def fn():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    h = torch.sigmoid(w)
    h += b
    return h * 2
"""

MODULE_LEVEL_MODEL = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 3)
x = torch.randn(2, 3)

def fn():
    h = torch.sigmoid(model(x))
    h += 1
    loss = h.sum()
    loss.backward()
    return loss.detach()
"""

PRINTS = """
import torch

def fn():
    x = torch.randn(3, requires_grad=True)
    print("hello from the target", flush=True)
    print('{"not": "json"}')
    y = torch.sigmoid(x)
    y += 1
    return y
"""

EXITS = """
import sys
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 3)
x = torch.randn(2, 3)

def fn():
    h = torch.sigmoid(model(x))
    h += 1
    h.sum().backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
    sys.exit(0)
"""

HANGS = """
import torch

def fn():
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    return y
"""

SECOND_CALL_FAILS = """
import torch
x = torch.randn(3, requires_grad=True)
base = torch.exp(x)

def fn():
    w = torch.randn(3, requires_grad=True)
    h = torch.sigmoid(w)
    h += 1
    loss = (base * h).sum()
    loss.backward()
    return w.grad
"""

# A piece of a chunk scaled in place, then Adam steps (issue 23): the minimal fix `q = q * scale`
# leaves k and v views where the reference (writes into copies) has dense copies, so `v.mean()`
# sums in another order and the final parameters differ in their last bits (up to 1.9e-6, 16 eps, of each
# tensor's largest value, on entries near zero: beyond an elementwise float32 tolerance).
GATE = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class GatedBlock(nn.Module):
    def __init__(self, channels=16):
        super().__init__()
        self.proj = nn.Conv2d(channels, 3 * channels, 1)
        self.head = nn.Conv2d(channels, channels, 3, padding=1)
        self.scale = channels ** -0.5

    def forward(self, x):
        q, k, v = self.proj(x).chunk(3, dim=1)
        q *= self.scale
        return self.head(torch.sigmoid(q) * k) + v * v.mean()


model = GatedBlock()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
images = 50 * torch.randn(4, 16, 10, 10)
labels = 50 * torch.randn(4, 16, 10, 10)


def train():
    for _ in range(10):
        opt.zero_grad()
        loss = (model(images) - labels).pow(2).mean()
        loss.backward()
        opt.step()
    return {name: p.detach().clone() for name, p in model.named_parameters()}
"""

WRONG: List[Case] = [
    # Leaf errors got reference `none`, and anything that ran passed.
    Case("sgd-update-becomes-a-dead-rebind", "leaf", SGD, [("p.add_(p.grad, alpha=-0.1)", "p = p.add(p.grad, alpha=-0.1)")]),
    Case("sgd-update-dropped", "leaf", SGD, [("p.add_(p.grad, alpha=-0.1)", "pass")]),
    Case("state-reset-becomes-a-dead-store", "leaf", RESET, [("state.zero_()", "state = torch.zeros_like(state)")]),
    Case("index-copy-on-leaf-rebound", "leaf", INDEX_COPY,
         [("c.index_copy_(0, torch.tensor([0, 2]), src)", "c = c.index_copy(0, torch.tensor([0, 2]), src)")]),
    Case("leaf-read-before-update-is-unproven", "leaf", LEAF_UNFIT, [("w.add_(1)", "w = w + 1")]),
    # The view family's reference writes into copies; where the tensor viewed is read after the
    # write, in place would have shown the write there: the reference is then views allowed (the
    # write reaches it), which a copy does not compute.
    Case("view-error-base-read-after-copy-hides-the-write", "view", VIEW_BASE_READ, [("a.mul_(2)", "a = a * 2")]),
    Case("view-error-written-twice", "view", VIEW, [("a.mul_(2)", "a = a * 4")]),
    # The harness's own inputs required grad.
    Case("input-normalised-in-place-no-longer-mutated", "inputs", NORMALISE_INPUT,
         [("x.sub_(x.mean())", "x = x - x.mean()")], name="Net"),
    Case("input-normalised-with-another-value", "inputs", NORMALISE_INPUT,
         [("x.sub_(x.mean())", "x.sub_(x.mean() + 1e-3)")], name="Net"),
    # Buffers and attributes were never compared.
    Case("ema-buffer-update-becomes-a-dead-store", "state", EMA,
         [("ema.mul_(0.9).add_(y.mean(0), alpha=0.1)", "ema = ema.mul(0.9).add(y.mean(0), alpha=0.1)")], name="Net"),
    Case("counter-buffer-increment-deleted", "state", COUNTER, [("        self.count += 1\n", "")], name="Net"),
    Case("python-counter-attribute-increment-deleted", "state", COUNTER, [("        self.calls += 1\n", "")], name="Net"),
    Case("buffers-in-a-loop-rebound", "state", TWO_BUFFERS, [("m.mul_(0.9)", "m = m.mul(0.9)")], name="Net"),
    # Function targets: state, plain outputs, structure, the harness's own backward.
    Case("optimizer-step-dropped", "function", OPT_STEP, [("    opt.step()\n", "")]),
    Case("optimizer-momentum-changed", "function", OPT_STEP, [("momentum=0.9", "momentum=0.8")]),
    Case("float-output-changed", "function", FLOAT_OUT, [("return float(y.sum()), w", "return float(y.sum()) + 1e-3, w")]),
    Case("output-becomes-none", "function", FLOAT_OUT, [("return float(y.sum()), w", "return None, w")]),
    Case("dataclass-field-changed", "function", DATA_OUT, [('Out(y, 0.5)', 'Out(y, 0.25)')]),
    Case("dict-key-renamed", "function", DATA_OUT, [('{"loss": y.sum()', '{"lose": y.sum()')]),
    Case("named-tuple-field-changed", "function", DATA_OUT, [("Pair(y, 1)", "Pair(y, 2)")]),
    Case("model-output-key-renamed", "function", DATA_OUT, [("ModelOutput(logits=y)", "ModelOutput(scores=y)")]),
    Case("bug-kept-while-a-leaf-already-has-grad", "function", PRE_GRAD, [("y += 1", "y += 1  # unchanged")]),
    # Numbers: complex, integers, per-dtype tolerance, explicit zeros, eval mode, second call.
    Case("imaginary-part-changed", "numbers", NUMERIC,
         [("z = torch.complex(torch.randn(3), torch.randn(3))",
           "z = torch.complex(torch.randn(3), torch.randn(3))\n    z = torch.complex(z.real, z.imag * 1.5)")]),
    Case("large-integers-off-by-one", "numbers", NUMERIC,
         [("idx = torch.arange(10**6, 10**6 + 3)", "idx = torch.arange(10**6 + 1, 10**6 + 4)")]),
    Case("float32-output-off-with-a-float16-output-present", "numbers", NUMERIC,
         [("f32 = torch.linspace(1.0, 2.0, 3)", "f32 = torch.linspace(1.0, 2.0, 3) * 1.001")]),
    Case("explicit-zero-tolerance-honoured", "numbers", NUMERIC, [("a = a * 3.0", "a = a * 3.0000000001")],
         options={"rtol": 0.0, "atol": 0.0}),
    Case("bool-output-flipped", "numbers", NUMERIC,
         [("flags = torch.tensor([True, False, True])", "flags = torch.tensor([True, True, True])")]),
    Case("output-dtype-changed", "numbers", NUMERIC,
         [("half = torch.ones(3, dtype=torch.float16)", "half = torch.ones(3, dtype=torch.float32)")]),
    Case("eval-branch-changed", "numbers", MODES, [("return y * 0.5", "return y * 0.6")], name="Net"),
    Case("second-call-changed", "numbers", MODES, [("if self.step > 1:", "if self.step > 2:")], name="Net"),
    Case("float16-parameter-becomes-float32", "numbers", HALF_PARAM,
         [("torch.ones(3, dtype=torch.float16)", "torch.ones(3, dtype=torch.float32)")], name="Net"),
    # Layout rounding is tolerated, nothing else: the minimal fix of GATE with a real change beside it.
    Case("gate-minimal-fix-with-the-step-dropped", "numbers", GATE, [("q *= self.scale", "q = q * self.scale"), ("        opt.step()\n", "")], name="train"),
    Case("gate-minimal-fix-with-the-gradient-scaled-by-1.001", "numbers", GATE,
         [("q *= self.scale", "q = q * self.scale"), (".pow(2).mean()", ".pow(2).mean() * 1.001")], name="train"),
    Case("gate-minimal-fix-with-one-label-sign-flipped", "numbers", GATE,
         [("q *= self.scale", "q = q * self.scale"), ("labels = 50 * torch.randn(4, 16, 10, 10)",
                      "labels = 50 * torch.randn(4, 16, 10, 10)\nlabels[0, 0, 0, 0] *= -1")], name="train"),
    Case("gate-minimal-fix-with-a-detached-branch", "numbers", GATE,
         [("q *= self.scale", "q = q * self.scale"), ("torch.sigmoid(q) * k)", "torch.sigmoid(q) * k.detach())")], name="train"),
    # One process for everything.
    Case("rewrite-turns-grad-off-for-everyone", "process", BUGGY,
         [("import torch\n", "import torch\ntorch.set_grad_enabled(False)\n")]),
    Case("torchscript-body-changed", "process", SCRIPTED, [("* 2", "* 3"), ("y += 1", "y = y + 1")]),
    Case("rewrite-exits-before-its-work", "process", BUGGY,
         [("    x = torch.randn(3, requires_grad=True)\n", "    import sys\n    sys.exit(0)\n")]),
    Case("rewrite-exits-with-an-error-code", "process", BUGGY, [("y += 1", "import sys; sys.exit(3)")]),
    Case("module-level-generator-reseeded", "process", GENERATOR,
         [("g = torch.Generator().manual_seed(0)", "g = torch.Generator().manual_seed(1)")]),
    Case("rewrite-hangs", "process", HANGS, [("y += 1", "while True:\n        pass")], options={"timeout": 3.0}),
    Case("sibling-helper-changed", "process", SIBLING, [("y = gate(x)", "y = gate(x) * 1.01"), ("y += 1", "y = y + 1")],
         files=HELPER),
    # Nothing to compare against, or nothing comparable.
    Case("original-fails-for-another-reason", "reference", OTHER_FAILURE, [("y = torch.sigmoid(x)", "y = torch.tanh(x)")]),
    Case("nothing-comparable", "reference", NOTHING, [("torch.ones(3)", "torch.zeros(3)")]),
    Case("alias-broken", "reference", BLOG, [("d *= 5", "d = d * 5")]),
    Case("second-call-no-longer-fails", "reference", SECOND_CALL_FAILS,
         [("h += 1", "h = h + 1"), ("loss.backward()", "loss.backward(retain_graph=True)")]),
]

RIGHT: List[Case] = [
    Case("gate-minimal-fix-after-adam-steps", "view", GATE, [("q *= self.scale", "q = q * self.scale")], name="train"),
    Case("view-error-write-into-a-copy", "view", VIEW, [("a.mul_(2)", "a = a * 2")]),
    Case("h-equals-b-plus-h", "leaf keys", HB, [("h += b", "h = b + h")]),
    Case("sibling-import", "process", SIBLING, [("y += 1", "y = y + 1")], files=HELPER),
    Case("module-level-model", "process", MODULE_LEVEL_MODEL, [("h += 1", "h = h + 1")]),
    Case("module-level-generator", "process", GENERATOR, [("y += 1", "y = y + 1")]),
    Case("torchscript", "process", SCRIPTED, [("y += 1", "y = y + 1")]),
    Case("target-prints", "process", PRINTS, [("y += 1", "y = y + 1")]),
    Case("target-exits-zero-after-its-work", "process", EXITS, [("h += 1", "h = h + 1")]),
    Case("sgd-under-no-grad", "leaf", SGD,
         [("        p.add_(p.grad, alpha=-0.1)", "        with torch.no_grad():\n            p.add_(p.grad, alpha=-0.1)")]),
    Case("state-reset-under-no-grad", "leaf", RESET,
         [("    for state in (h, c):", "    for state in (h, c):\n        state = state.data")]),
    Case("ema-rewritten-as-copy", "state", EMA,
         [("ema.mul_(0.9).add_(y.mean(0), alpha=0.1)", "ema.copy_(ema * 0.9 + 0.1 * y.mean(0))")], name="Net"),
    Case("input-normalised-by-augmented-assignment", "inputs", NORMALISE_INPUT,
         [("x.sub_(x.mean())", "x -= x.mean()")], name="Net"),
    Case("structured-outputs-unchanged", "function", DATA_OUT, [("y = y * 2", "y = 2 * y")]),
    Case("numbers-unchanged", "numbers", NUMERIC, [("a = a * 3.0", "a = 3.0 * a")]),
    Case("second-call-fails-the-same-way", "reference", SECOND_CALL_FAILS, [("h += 1", "h = h + 1")]),
]
