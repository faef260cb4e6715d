"""Family A: a function or module of another file writes in place into what its caller handed it
(issue 24, stop 40: "the caller's facts do not reach the callee").

A file proves a hazard in a function of its own whose parameter the function writes into, where
one of the file's calls passes a tensor autograd saved before the call (``Hazards._from_callers``).
The same proof now crosses files: the caller's own analysis records, per call to another module,
which arguments it proves saved for a backward still to run (``CallFact.args_saved``, with its
reason), and the callee's analysis reads them through the project index. Calls of instances of
another module's class (``self.block(x)``, ``Block(d)(x)``, ``blk = Block(d); blk(x)``) are recorded
as calls of its ``forward`` (``CallFact.bound``: positions after ``self``; one of the calls there
may be, so no joined answer such as "every call runs with grad off" counts them). A helper module
that never names torch is analysed where other files hand its functions tensors.

Working look-alikes stay silent: a caller handing a tensor nothing saved (a conv's output, a
clone), a call with grad off, a module attribute rebound from outside the class, a write into
another parameter than the saved one, a torch-free helper handed numbers. Every program is new
(none is a corpus case); each original dies in backward, each look-alike runs.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.test_recall39_callers import _findings, _fix, _gradients, _line, _project

MERGE = """\
    {imports}
    def merge(x, skip):
        x += skip
        return x
"""

CALLER = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from helpers import merge


    class Up(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3, padding=1)

        def forward(self, x):
            {body}
            return h


    def compute():
        torch.manual_seed(0)
        up = Up()
        x = torch.randn(2, 3, 6, 6)
        up(x).sum().backward()
        return [round(float(v), 5) for v in up.conv.weight.grad.flatten()[:6]]
"""


def _caller(body: str) -> str:
    return CALLER.replace("{body}", body.replace("\n", "\n            "))


def _proven(tmp_path, module: str, text: str) -> list:
    return [f for f in _findings(tmp_path, ["model.py", "helpers.py"])
            if f[0] == module and f[1] == _line(tmp_path, module, text) and f[2].startswith("IPF1")]


@pytest.mark.parametrize("imports", ["import torch\n", "\n"], ids=["helper-names-torch", "helper-never-names-torch"])
def test_a_helper_of_another_file_writing_into_the_caller_s_saved_activation_is_proven(tmp_path, imports):
    _project(tmp_path, {"helpers.py": MERGE.replace("{imports}", imports),
                        "model.py": _caller("h = F.relu(self.conv(x))\nh = merge(h, x)")})
    assert _proven(tmp_path, "helpers.py", "x += skip"), _findings(tmp_path, ["model.py", "helpers.py"])
    assert _gradients(tmp_path) is None  # relu saved its result; the helper bumped its version
    # the unsafe tier's rewrite (the caller may rely on the mutation: param-mutation) gives the
    # out-of-place program's gradients
    run = subprocess.run([sys.executable, "-m", "codemod", "fix", "--no-cache", "--unsafe-fixes",
                          "model.py", "helpers.py"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    fixed = _gradients(tmp_path)
    _project(tmp_path, {"helpers.py": MERGE.replace("{imports}", imports).replace("x += skip", "x = x + skip")})
    assert fixed is not None and fixed == _gradients(tmp_path)


@pytest.mark.parametrize("body", [
    "h = self.conv(x)\nh = merge(h, x)",  # a conv saves its input, not its output
    "h = F.relu(self.conv(x)).clone()\nh = merge(h, x)",  # a clone: nothing saved it
    "with torch.no_grad():\n    h = merge(F.relu(self.conv(x)), x)\nh = h + self.conv(x)",
], ids=["conv-output", "clone", "grad-off-call"])
@pytest.mark.parametrize("imports", ["import torch\n", "\n"], ids=["helper-names-torch", "helper-never-names-torch"])
def test_a_caller_handing_a_tensor_nothing_saved_proves_nothing(tmp_path, body, imports):
    _project(tmp_path, {"helpers.py": MERGE.replace("{imports}", imports), "model.py": _caller(body)})
    assert not _proven(tmp_path, "helpers.py", "x += skip")
    assert _gradients(tmp_path) is not None  # the program works


def test_a_torch_free_helper_handed_numbers_stays_unread(tmp_path):
    _project(tmp_path, {
        "helpers.py": "def bump(n, k):\n    n += k\n    return n\n",
        "model.py": "import torch\nfrom helpers import bump\n\n\ndef compute():\n"
                    "    w = torch.ones(2, requires_grad=True)\n    steps = bump(1, 2)\n"
                    "    (w.exp() * steps).sum().backward()\n    return w.grad.tolist()\n"})
    assert _findings(tmp_path, ["model.py", "helpers.py"], select="ALL") == []
    assert _gradients(tmp_path) is not None


LAYERS = """\
    import torch
    import torch.nn as nn


    class AddBias(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.bias = nn.Parameter(torch.full((c,), 0.5))

        def forward(self, x, y):
            {write}
            return x + y
    {call_method}"""

GATE = """\
    import torch
    import torch.nn as nn
    from layers import AddBias


    class Sum(nn.Module):
        def forward(self, a, b):
            return a + b


    class Gate(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.fc = nn.Linear(c, c)
            self.add = AddBias(c)

        def forward(self, x):
            g = torch.sigmoid(self.fc(x))
            {call}


    {more}
    def compute():
        torch.manual_seed(0)
        net = Gate(4)
        {extra}net(torch.randn(3, 4)).sum().backward()
        return [round(float(v), 5) for v in net.fc.weight.grad.flatten()[:6]]
"""


def _layers(write: str, call_method: str = "") -> str:
    return LAYERS.replace("{write}", write).replace("{call_method}", call_method)


QUIET = """class Quiet(Gate):
        def __init__(self, c):
            super().__init__(c)
            self.add = Sum()

"""


def _gate(call: str, extra: str = "") -> str:
    more = QUIET if "Quiet" in extra else ""
    return GATE.replace("{call}", call).replace("{extra}", extra).replace("{more}", more)


@pytest.mark.parametrize("call", [
    "return self.add(g, self.fc(x))",  # an attribute set only to the class's instance
    "return AddBias(4)(g, self.fc(x))",  # a construction called at once
    "add = AddBias(4)\n            return add(g, self.fc(x))",  # a local bound only to one
    "return self.add(y=self.fc(x), x=g)",  # by keyword
], ids=["attribute", "constructed", "local", "keywords"])
def test_a_module_of_another_file_writing_into_its_saved_input_is_proven(tmp_path, call):
    _project(tmp_path, {"layers.py": _layers("x += self.bias"), "model.py": _gate(call)})
    found = [f for f in _findings(tmp_path, ["model.py", "layers.py"])
             if f[0] == "layers.py" and f[1] == _line(tmp_path, "layers.py", "x += self.bias") and f[2].startswith("IPF1")]
    assert found, _findings(tmp_path, ["model.py", "layers.py"])
    assert _gradients(tmp_path) is None  # sigmoid saved its result


@pytest.mark.parametrize("write, call, extra, call_method", [
    # the saved tensor goes in as `x`; the forward writes into `y`, the linear's fresh output
    ("y += self.bias", "return self.add(g, self.fc(x))", "", ""),
    # the class's own `__call__` hands `forward` a copy
    ("x += self.bias", "return self.add(g, self.fc(x))", "",
     "\n        def __call__(self, x, y):\n            return self.forward(x.clone(), y)\n"),
    # a subclass in the caller's file sets the attribute to another module
    ("x += self.bias", "return self.add(g, self.fc(x))", "net = Quiet(4)\n        ", ""),
    # `net.add` rebound from outside the class: the attribute is not the class's values alone
    ("x += self.bias", "return self.add(g, self.fc(x))", "net.add = Sum()\n        ", ""),
    # the call runs with grad off: nothing is recorded for backward there
    ("x += self.bias", "with torch.no_grad():\n                g = self.add(torch.sigmoid(x), x)\n            return g * self.fc(x)", "", ""),
], ids=["other-parameter", "own-call", "subclass-here", "rebound-outside", "grad-off"])
def test_module_look_alikes_stay_silent(tmp_path, write, call, extra, call_method):
    _project(tmp_path, {"layers.py": _layers(write, call_method), "model.py": _gate(call, extra)})
    found = [f for f in _findings(tmp_path, ["model.py", "layers.py"])
             if f[0] == "layers.py" and f[2].startswith("IPF1")]
    assert found == []
    assert _gradients(tmp_path) is not None


GUARDED = """\
    import torch
    def merge(x, skip, inplace=False):
        if inplace:
            x += skip
            return x
        return x + skip
"""


def test_a_write_the_callee_guards_with_a_flag_the_caller_leaves_off_is_not_proven(tmp_path):
    """What another file's call passes is all that is known of it: a write under ``if inplace:``
    may not run for that call (here it never does, and the program works)."""
    _project(tmp_path, {"helpers.py": GUARDED, "model.py": _caller("h = F.relu(self.conv(x))\nh = merge(h, x)")})
    assert not _proven(tmp_path, "helpers.py", "x += skip")
    assert _gradients(tmp_path) is not None  # the program works
