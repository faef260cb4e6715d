"""Issue 24 (recall, rec24c): what rec24b's recall work got wrong on real libraries, and the groups
of misses after it.

Each test is a small shape of the group (written after the real code named, not a copy of it) and
failed on the code before its change; where it says a program dies at backward or runs, torch is
run to show it.
"""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn as nn

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
OFFSET = HEADER.count("\n")


def found(body: str, select=("IPF1",), header: str = HEADER):
    data = (header + textwrap.dedent(body)).encode()
    result = process_source(data, "case.py", Settings(select=select))
    assert result.error is None, result.error
    offset = header.count("\n")
    return [(f.code, f.span.line - offset, f.status.value if f.status else None, f.message) for f in result.findings]


def codes(body: str, select=("IPF1",), header: str = HEADER):
    return [(code, line) for code, line, _, _ in found(body, select, header)]


# ----------------------------------------------------------------- own-gradient saves need grad
# An op that saves its own input (`logsumexp`, `norm`, `pow` by a number, `abs`...) or its result
# (`exp`, `sigmoid`, `tanh`...) saves it for the gradient of that very input: writing into it
# breaks backward only where that input requires grad. A plain tensor of non-differentiable code
# (pyro's SMC filter resampling its log weights, torch_geometric's WL colour histogram) never
# does, so a proven hazard there needs positive evidence; without it the finding is "possible".
# A tensor the function was handed (an argument: a loss's prediction, a metric's input) is such
# evidence (rec24d): the SMC weights are object state and the WL counts a fresh `ones_like`.

SMC = """\
class Filter:
    def resample(self):
        logp = self.state._log_weights
        logp -= logp.logsumexp(-1)
        probs = logp.exp()
        return probs
"""

WL = """\
class WL(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hashmap = {}

    def histogram(self, x, batch=None, norm=False):
        index = batch * len(self.hashmap) + x
        out = scatter(torch.ones_like(index), index, dim=0, reduce="sum")
        out = out.view(2, -1)
        if norm:
            out = out.to(torch.float)
            out /= out.norm(dim=-1, keepdim=True)
        return out
"""
WL_HEADER = HEADER.replace("\n\n\n", "\nfrom torch_geometric.utils import scatter\n\n\n")


def test_an_own_gradient_save_of_a_plain_tensor_is_only_possible():
    assert codes(SMC) == []
    assert codes(SMC, ("IPF2",)) == [("IPF201", 4)]
    assert codes(WL, header=WL_HEADER) == []
    assert codes(WL, ("IPF2",), header=WL_HEADER) == [("IPF201", 12)]
    # the same writes run: nothing requires grad, nothing is saved, nothing raises
    logp = torch.randn(5)
    logp -= logp.logsumexp(-1)
    out = torch.ones(2, 3)
    out /= out.norm(dim=-1, keepdim=True)
    assert not logp.requires_grad and not out.requires_grad


def test_an_own_gradient_save_with_evidence_of_grad_stays_proven():
    # a tensor made with requires_grad=True flows into it
    leaf = """\
    def f(n):
        w = torch.randn(n, requires_grad=True)
        logp = w * 2.0
        logp -= logp.logsumexp(-1)
        return logp.exp().sum()
    """
    assert codes(leaf) == [("IPF101", 4)]
    # an activation of a module with parameters
    layer = """\
    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            out = self.fc(x)
            out /= out.norm(dim=-1, keepdim=True)
            return out
    """
    assert codes(layer) == [("IPF101", 8)]
    # a result saved by `exp` in a forward of a module with parameters: an activation
    act = layer.replace("out = self.fc(x)", "out = torch.exp(x)").replace(
        "out /= out.norm(dim=-1, keepdim=True)", "out += 1")
    assert codes(act) == [("IPF101", 8)]
    # the same in a plain function: `x` is an input (what a caller hands it may require grad)
    plain = """\
    def g(x):
        out = torch.exp(x)
        out += 1
        return out
    """
    assert codes(plain) == [("IPF101", 3)]
    # ... unless every call of it the file shows passes a tensor that requires no grad: possible
    fresh = plain + "\n\n    g(torch.ones(3))\n    g(torch.zeros(2))\n"
    assert codes(fresh) == []
    assert codes(fresh, ("IPF2",)) == [("IPF201", 3)]
    # ... and a value the object holds (SMC's `self.state._log_weights`) is no input: see above

    def run():
        w = torch.randn(5, requires_grad=True)
        logp = w * 2.0
        logp -= logp.logsumexp(-1)
        logp.exp().sum().backward()

    assert raises_at_backward(run)



def test_a_closures_argument_is_no_input():
    # ESMFold's `_inference_forward` (inference-only, grad off) projects with a nested helper:
    # its calls are the enclosing function's, so its argument shows nothing; a module-level
    # function of the same body is handed its argument by callers anywhere: an input
    body = """\
    class Update(nn.Module):
        def __init__(self):
            super().__init__()
            self.g = nn.Linear(4, 4)

        def infer(self, z, chunk):
            def helper(pair):
                p = torch.exp(pair)
                p *= 2.0
                return p
            return helper(z[:chunk])
    """
    assert codes(body) == []
    assert codes(body, ("IPF2",)) == [("IPF201", 9)]
    top = """\
    def helper(pair):
        p = torch.exp(pair)
        p *= 2.0
        return p
    """
    assert codes(top) == [("IPF101", 3)]


KRON = """\
class Kron:
    def __init__(self, *factors):
        self.factors = factors

    def symeig(self):
        out = []
        for f in self.factors:
            evals, evecs = torch.linalg.eigh(f.double())
            evals.clamp_min_(0.0)
            out.append(evals)
        return out


class State:
    def __init__(self, n):
        self.log_weights = torch.zeros(n)


class Filter:
    def __init__(self, n):
        self.state = State(n)

    def resample(self):
        logp = self.state.log_weights
        logp -= logp.logsumexp(-1)
        return logp.exp()
"""


def test_what_an_object_was_handed_at_construction_is_an_input():
    # gpytorch's KroneckerProductLazyTensor._symeig: the factors the object was built from are
    # what its creator handed it (kernel matrices of parameters): `clamp_min_` on eigh's
    # eigenvalues is proven. The SMC filter's weights are state the object made (`zeros`): possible.
    assert codes(KRON) == [("IPF103", 9)]
    assert codes(KRON, ("IPF2",)) == [("IPF201", 25)]

    def run():
        w = torch.rand(3, requires_grad=True)
        f = torch.outer(w, w) + torch.eye(3)
        evals, _ = torch.linalg.eigh(f.double())
        evals.clamp_min_(0.0)
        evals.sum().backward()

    assert raises_at_backward(run)


def test_a_function_computing_with_out_arguments_has_no_inputs_that_require_grad():
    # linear_operator's linear_cg: `rhs_norm = rhs.norm(...)`, `rhs_norm.masked_fill_(...)`, and
    # later `torch.mul(..., out=storage)`: an op with `out=` raises when an argument requires grad,
    # so the function runs only on tensors that do not (inside a custom Function's forward)
    body = """\
    def cg(rhs, storage):
        rhs_norm = rhs.norm(2, dim=-2, keepdim=True)
        rhs_norm.masked_fill_(rhs_norm < 1e-10, 1)
        torch.mul(rhs, rhs, out=storage)
        return rhs / rhs_norm
    """
    assert codes(body) == []
    assert codes(body, ("IPF2",)) == [("IPF203", 3)]
    assert codes(body.replace("torch.mul(rhs, rhs, out=storage)", "storage = torch.mul(rhs, rhs)")) == [("IPF103", 3)]

    def run():
        rhs = torch.rand(3, 2, requires_grad=True) * 1.0
        torch.mul(rhs, rhs, out=torch.empty(3, 2))

    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        run()

# ----------------------------------------------------------------- a write in an assignment's value
# `h = g[0, 1:].add_(1).mul_(2.0)`: the write runs inside the value, so the clone must come
# before the whole statement (a temporary computed first would write into the saved tensor).

CHAIN = """\
def compute():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4, requires_grad=True)
    g = x.exp()
    h = g[0, 1:, :].add_(1).mul_(2.0)
    (g.sum() + h.sum()).backward()
    return x.grad
"""


def _run(source: str) -> torch.Tensor:
    space: dict = {}
    exec(compile(source, "case.py", "exec"), space)
    return space["compute"]()


def test_a_write_inside_an_assignment_value_is_cloned_before_the_statement():
    for write in ("g[0, 1:, :].add_(1).mul_(2.0)", "g[0].mul_(2.0)", "g[0, 1:, :].add_(1)",
                  "g[0, 1:].add_(1).mul_(torch.full((2, 4), 3.0)).clamp_(0, 9)"):
        source = HEADER + CHAIN.replace("g[0, 1:, :].add_(1).mul_(2.0)", write)
        result = process_source(source.encode(), "case.py", Settings(), fix=True)
        assert result.error is None and result.changed, write
        lines = result.fixed.splitlines()
        clone = lines.index("    g = g.clone()")
        assert lines[clone + 1].strip().startswith("h = g["), result.fixed
        assert raises_at_backward(lambda: _run(source))
        want = _run(source.replace("g = x.exp()", "g = x.exp().clone()"))
        assert torch.allclose(_run(result.fixed), want)
    # the value reads `g` before the write runs (an op may save it first): no fix
    source = HEADER + CHAIN.replace("h = g[0, 1:, :].add_(1).mul_(2.0)", "h = torch.mm(g[1], g[1].t()) + g[0].add_(1)")
    got = [(f.code, f.status.value, f.reason) for f in process_source(source.encode(), "case.py", Settings()).findings]
    assert got == [("IPF104", "manual", "read-in-statement")]


# ----------------------------------------------------------------- callers in other files
# A helper module (`helpers.py`, loaded by `import_module("helpers")` or imported) whose function
# normalizes what it is given in place after `torch.norm` saved it: alone, nothing shows the
# argument requires grad (possible); with the project's files, every call passes a tensor that
# does (a parameter, what a layer returned), so the hazard is proven there.

HELPER = """\
import torch
import torch.nn as nn


def unit(v):
    v = v * 1.0
    v /= torch.norm(v, dim=-1, keepdim=True)
    return v
"""

CALLER = """\
import torch
import torch.nn as nn
from importlib import import_module

unit = import_module("helpers").unit


def compute():
    layer = nn.Linear(3, 3)
    out = unit(layer(torch.randn(2, 3)))
    out.sum().backward()
"""


def _project_findings(tmp_path, *names):
    import json
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--select", "IPF1,IPF2",
                          "--format", "json", *names], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    return sorted((f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"])
                  for f in json.loads(run.stdout)["findings"])


def test_callers_in_other_files_show_an_argument_requires_grad(tmp_path):
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / "case.py").write_text(CALLER)
    # alone, `v` is the helper's input (proven); a call in its own file passing a plain tensor
    # says what it is handed (possible); a call elsewhere passing what requires grad proves it
    assert _project_findings(tmp_path, "helpers.py") == [("helpers.py", 7, "IPF101")]
    (tmp_path / "helpers.py").write_text(HELPER + "\n\nONE = unit(torch.ones(2, 3))\n")
    assert _project_findings(tmp_path, "helpers.py") == [("helpers.py", 7, "IPF201")]
    (tmp_path / "helpers.py").write_text(HELPER)
    assert _project_findings(tmp_path, "helpers.py", "case.py") == [("helpers.py", 7, "IPF101")]
    # a caller elsewhere passing a plain tensor takes nothing away: case.py's call raises
    (tmp_path / "other.py").write_text("import torch\nfrom helpers import unit\n\n\ndef f():\n"
                                       "    return unit(torch.ones(2, 3))\n")
    assert _project_findings(tmp_path, "helpers.py", "case.py", "other.py") == [("helpers.py", 7, "IPF101")]

    def run():
        layer = nn.Linear(3, 3)
        v = layer(torch.randn(2, 3)) * 1.0
        v /= torch.norm(v, dim=-1, keepdim=True)
        v.sum().backward()

    assert raises_at_backward(run)


# ----------------------------------------------------------------- multi-output views from a method
# fairseq's MultiheadAttention: `q, k, v = self.in_proj_qkv(query)` on the self-attention branch,
# where the method returns `self._in_proj(query).chunk(3, dim=-1)`, then `q *= self.scaling`:
# PyTorch refuses the in-place write into an output of chunk (family C) wherever that branch runs.

MHA = """\
class MHA(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.in_proj_weight = nn.Parameter(torch.randn(3 * dim, dim))
        self.scaling = dim ** -0.5

    def forward(self, query, key):
        if query is key:
            q, k, v = self.in_proj_qkv(query)
        else:
            q = self._in_proj(query, end=4)
            k, v = self._in_proj(key, start=4).chunk(2, dim=-1)
        q *= self.scaling
        return torch.softmax(q @ k.t(), -1) @ v

    def in_proj_qkv(self, query):
        return self._in_proj(query).chunk(3, dim=-1)

    def _in_proj(self, x, start=0, end=None):
        return F.linear(x, self.in_proj_weight[start:end])
"""


def test_a_multi_output_view_returned_by_a_method_on_one_branch_is_proven():
    got = found(MHA, ("IPF1",))
    assert [(c, line) for c, line, _, _ in got] == [("IPF106", 13)], got
    # a method that may return something else than views proves nothing
    other = MHA.replace("        return self._in_proj(query).chunk(3, dim=-1)",
                        "        if query.dim() > 2:\n            return query, query, query\n"
                        "        return self._in_proj(query).chunk(3, dim=-1)")
    assert codes(other, ("IPF1",)) == []
    source = HEADER + MHA
    space: dict = {}
    exec(compile(source, "case.py", "exec"), space)
    torch.manual_seed(0)
    x = torch.randn(2, 4)
    try:
        space["MHA"](4)(x, x).sum().backward()
    except RuntimeError as error:
        assert "is a view and is being modified inplace" in str(error)
    else:
        raise AssertionError("torch allowed the write")
    fixed = process_source(source.encode(), "case.py", Settings(), fix=True)
    assert fixed.changed and "q = q * self.scaling" in fixed.fixed
    space = {}
    exec(compile(fixed.fixed, "case.py", "exec"), space)
    torch.manual_seed(0)
    m = space["MHA"](4)
    m(x, x).sum().backward()
    assert m.in_proj_weight.grad is not None



# The branch argument above holds for one pass: a path through the chunk branch reaches the write
# with `q` still a view. A loop breaks it where it rebinds `q` between the two (a loop that always
# runs, or the other branch on a later turn of a loop around the `if`): there the write may get a
# plain tensor on every run. Nothing is proven there; a write on the same turn as the branch is.

BRANCH_LOOPS = {
    # the loop that rebinds `q` sits in the chunk branch itself: it always runs
    "rebound-in-branch": ("""\
        def forward(self, x, refine):
            if refine:
                q, k = self.proj(x).chunk(2, dim=-1)
                for _ in range(2):
                    q = q * 0.5 + k
                q *= 2.0
                return q.sum()
            return x.sum()
        """, (True,), False),
    # the chunk branch runs on the first turn only, the write after the loop
    "write-after-the-loop": ("""\
        def forward(self, x):
            for i in range(3):
                if i == 0:
                    q, k = self.proj(x).chunk(2, dim=-1)
                else:
                    q = self.proj(x)[:, :4] * 2
            q *= 2.0
            return q.sum()
        """, (), False),
    # a `continue` on the chunk branch's turn skips the write; a later turn rebinds `q` first
    "continue-past-the-write": ("""\
        def forward(self, x):
            for i in range(3):
                if i == 0:
                    q, k = self.proj(x).chunk(2, dim=-1)
                    continue
                else:
                    q = self.proj(x)[:, :4] * 2
                q *= 2.0
            return q.sum()
        """, (), False),
    # control: the write runs on the chunk branch's own turn
    "write-on-the-same-turn": ("""\
        def forward(self, x):
            for i in range(3):
                if i == 0:
                    q, k = self.proj(x).chunk(2, dim=-1)
                else:
                    q = self.proj(x)[:, :4] * 2
                q *= 2.0
            return q.sum()
        """, (), True),
}


@pytest.mark.parametrize("case", sorted(BRANCH_LOOPS))
def test_a_loop_that_rebinds_between_the_branch_and_the_write_proves_nothing(case, cases=BRANCH_LOOPS):
    forward, args, raises = cases[case]
    source = ("class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.proj = nn.Linear(4, 8)\n\n" + textwrap.indent(textwrap.dedent(forward), "    "))
    space: dict = {}
    exec(compile(HEADER + source, "case.py", "exec"), space)
    try:
        space["Head"]()(torch.randn(3, 4), *args).backward()
    except RuntimeError as error:
        assert "is a view and is being modified inplace" in str(error)
        ran = False
    else:
        ran = True
    assert ran is not raises  # the label, by running it
    assert [c for c, _ in codes(source)] == (["IPF106"] if raises else [])



# The same holds where the chunk branch leaves before the write (`return`, `break`): the path
# through it never reaches the write. A `raise` on another branch takes nothing from it.

BRANCH_EXITS = {
    "return-after-the-view": ("""\
        def forward(self, x, first):
            if first:
                q, k = self.proj(x).chunk(2, dim=-1)
                return (q * k).sum()
            else:
                q = self.proj(x)[:, :4] * 2
            q *= 2.0
            return q.sum()
        """, (True,), False),
    "break-past-the-write": ("""\
        def forward(self, x):
            for i in range(3):
                if i == 2:
                    q, k = self.proj(x).chunk(2, dim=-1)
                    break
                else:
                    q = self.proj(x)[:, :4] * 2
                q *= 2.0
            return q.sum()
        """, (), False),
    # control: the view is made on an `elif`, the `else` raises; the write runs after the view
    "elif-beside-a-raise": ("""\
        def forward(self, x, mode):
            if mode == "plain":
                q = self.proj(x)[:, :4] * 2
            elif mode == "split":
                q, k = self.proj(x).chunk(2, dim=-1)
            else:
                raise ValueError(mode)
            q *= 2.0
            return q.sum()
        """, ("split",), True),
}


@pytest.mark.parametrize("case", sorted(BRANCH_EXITS))
def test_a_branch_that_leaves_before_the_write_proves_nothing(case):
    test_a_loop_that_rebinds_between_the_branch_and_the_write_proves_nothing(case, BRANCH_EXITS)


# ----------------------------------------------------------------- methods of a distribution
# pyro's GaussianScaleMixture.log_prob: `result = torch.logsumexp(... self.component_scale ...)`,
# then `result -= ...`. A probability distribution's methods compute from its parameters what
# inference differentiates (log_prob, rsample, a filter), so its attributes are taken to
# require grad there: proven. The same method in a class that is no distribution: possible.

GSM = """\
from pyro.distributions.torch_distribution import TorchDistribution


class Mixture(TorchDistribution):
    def __init__(self, scale, logits):
        self.scale = scale
        self.logits = logits

    def log_prob(self, value):
        result = torch.logsumexp(self.logits - 0.5 * value.pow(2).sum() / self.scale.pow(2), dim=-1)
        result -= 0.5 * math.log(2.0 * math.pi)
        return result
"""


def test_a_method_of_a_distribution_reads_parameters_that_require_grad():
    header = HEADER.replace("\n\n\n", "\nimport math\n\n\n")
    assert codes(GSM, header=header) == [("IPF101", 11)]
    # the same class, no distribution, computing from state it made itself (no argument, nothing
    # handed to its constructor): possible
    plain = GSM.replace("(TorchDistribution)", "").replace(" - 0.5 * value.pow(2).sum() / self.scale.pow(2)",
                                                           " / self.scale.pow(2)")
    own = plain.replace("self.scale = scale", "self.scale = load(scale)").replace(
        "self.logits = logits", "self.logits = load(logits)")
    assert codes(own, header=header) == []
    assert codes(own, ("IPF2",), header=header) == [("IPF201", 11)]
    # handed to its constructor (`self.scale = scale`): an input, as an argument would be
    assert codes(plain, header=header) == [("IPF101", 11)]

    scale = torch.rand(3, requires_grad=True)

    def run():
        result = torch.logsumexp(torch.zeros(3) - 0.5 * 2.0 / scale.pow(2), dim=-1)
        result -= 0.9
        result.backward()

    assert raises_at_backward(run)


def test_a_chain_of_helpers_passing_one_argument_down_is_answered_once_per_parameter():
    """Each helper calls the next four times with its argument: asking whether the last one's
    argument requires grad walked every path (4**19 of them) before each parameter's answer was
    kept. The check must finish in seconds and still prove the write at the bottom."""
    import subprocess
    import sys

    lines = ["import torch", ""]
    for i in range(20):
        lines.append(f"def f{i}(x):")
        if i < 19:
            lines.append(f"    return f{i + 1}(x) + f{i + 1}(x) * f{i + 1}(x) - f{i + 1}(x)")
        else:
            lines += ["    y = x.exp()", "    y += 1", "    return y"]
    lines += ["", "w = torch.randn(3, requires_grad=True)", "f0(w).sum().backward()", ""]
    source = "\n".join(lines)
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from codemod.config import Settings; "
         "from codemod.engine.pipeline import process_source; "
         "r = process_source(sys.stdin.buffer.read(), 'chain.py', Settings(select=('IPF1',))); "
         "print(sorted(f.code for f in r.findings))"],
        input=source, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['IPF101']"
