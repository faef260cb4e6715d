"""Issue 24 (recall half, rec24b): groups of real bug reports the default report missed.

Each test is a small shape of the group (not a copy of a case of bench/realworld/), and failed on
the code before its change; where it says a program dies at backward, torch is run to show it.
"""

from __future__ import annotations

import textwrap

import torch
import torch.nn as nn

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
OFFSET = HEADER.count("\n")


def found(body: str, select=("IPF1",)):
    data = (HEADER + textwrap.dedent(body)).encode()
    result = process_source(data, "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line - OFFSET, f.status.value if f.status else None, f.message) for f in result.findings]


def codes(body: str, select=("IPF1",)):
    return [(code, line) for code, line, _, _ in found(body, select)]


# ----------------------------------------------------------------- the write shows the dtype
# `x /= x.pow(2).sum().sqrt()` on a value the analysis cannot type (a forward's input, what
# `super().forward(x)` returned): `pow` also takes integral tensors (saved without a gradient),
# but true division in place, a floating operand or a float-only op raises on an integral one,
# so the program reaching the write has a floating tensor there; `x.pow(...)` read before shows
# it is a tensor at all.

L2 = """\
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)


class L2(Base):
    def forward(self, x):
        out = super().forward(x)
        out {write}
        return out
"""


def test_a_write_that_needs_a_floating_tensor_proves_the_pow_save():
    for write in ("/= out.pow(2).sum(1, keepdim=True).sqrt()", "*= 0.5 + out.pow(2)"):
        got = found(L2.format(write=write))
        assert [(c, line) for c, line, _, _ in got] == [("IPF101", 13)], write
        assert "saved for backward by `pow`" in got[0][3]
    # `+=` of something the analysis cannot type: the tensor may be integral (an index saved by pow)
    assert codes(L2.format(write="+= out.pow(2).sum(1, keepdim=True).long()")) == []
    # nor possible (prec55): the pow's result reaches only `.long()`, which has no history, so no backward
    # reads what pow saved (torch runs it: `out += out.pow(2).sum(1, keepdim=True).long()`, then backward)
    assert codes(L2.format(write="+= out.pow(2).sum(1, keepdim=True).long()"), ("IPF2",)) == []


def test_the_receiver_of_a_tensor_method_is_a_tensor_so_the_fix_is_safe():
    got = found(L2.format(write="/= out.pow(2).sum(1, keepdim=True).sqrt()"))
    assert got[0][2] == "safe"
    # a `sum` (numpy has it too) shows nothing: the fix stays unsafe
    body = L2.replace("out {write}", "n = out.sum()\n        out /= n")
    assert [s for c, line, s, _ in found(body, ("IPF0", "IPF1", "IPF2")) if line == 14] == ["unsafe"]
    # a value bound again between the read and the write is another value
    body = L2.replace("out {write}", "n = out.pow(2).sum()\n        out = helper(out)\n        out /= n")
    assert [s for c, line, s, _ in found(body, ("IPF0", "IPF1", "IPF2")) if line == 15] == ["unsafe"]


def test_the_dtype_facts_agree_with_torch():
    for write in (lambda t: t.__itruediv__(2), lambda t: t.__imul__(0.5), lambda t: t.div_(3),
                  lambda t: t.sqrt_(), lambda t: t.add_(torch.ones(3))):
        for dtype in (torch.long, torch.bool):
            try:
                write(torch.ones(3, dtype=dtype))
            except RuntimeError as error:
                assert "can't be cast" in str(error) or "not supported" in str(error)
            else:
                raise AssertionError(f"{write} ran on {dtype}")
    torch.ones(3, dtype=torch.long).div_(2, rounding_mode="floor")  # no proof: integral division

    class Base(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return self.fc(x)

    class M(Base):
        def forward(self, x):
            out = super().forward(x)
            out /= out.pow(2).sum(1, keepdim=True).sqrt()
            return out

    assert raises_at_backward(lambda: M()(torch.rand(2, 3)).sum().backward())


NORMALIZE = """\
def unit(points, index):
    v = points[index[:, 1]] - points[index[:, 0]]
    v {write}
    return v.sum()
"""


def test_the_first_argument_of_a_torch_op_that_refuses_numbers_is_a_tensor():
    # `torch.norm(v)` saved v; `v /= ...` needs a floating tensor: proven, and a safe fix
    caller = "unit(nn.Parameter(torch.rand(4, 3)), torch.tensor([[0, 1], [2, 3]]))\n"
    got = found(NORMALIZE.format(write="/= torch.norm(v, dim=1).unsqueeze(1)") + caller)
    assert [(c, line, s) for c, line, s, _ in got] == [("IPF101", 3, "safe")]
    assert "saved for backward by `torch.norm`" in got[0][3]
    # `torch.mul(v, w)` takes a number first: no proof that v is a tensor, nor that it was saved
    assert codes(NORMALIZE.format(write="/= torch.mul(v, 2)")) == []
    # a list handed to torch.cat is no tensor
    body = "def f(parts, w):\n    y = torch.cat(parts)\n    parts[0] /= 2\n    return y\n"
    assert codes(body, ("IPF1", "IPF2")) == []

    points = torch.rand(4, 3, requires_grad=True)
    index = torch.tensor([[0, 1], [2, 3]])

    def run():
        v = points[index[:, 1]] - points[index[:, 0]]
        v /= torch.norm(v, dim=1).unsqueeze(1)
        v.sum().backward()

    assert raises_at_backward(run)


def test_the_torch_ops_that_take_a_number_first_agree_with_torch():
    from codemod import torch_api
    from codemod.analysis.hazard import _NUMBER_FIRST

    takes_number = set()
    for name in set(torch_api.OP_SAVES) | set(torch_api.OP_SAVES_MEASURED):
        fn = getattr(torch, name, None)
        if name.endswith("_") or not callable(fn):
            continue
        for args in ((2.0,), (2.0, torch.ones(3)), (2.0, 3.0), (2.0, torch.ones(3), torch.ones(3))):
            try:
                fn(*args)
            except Exception:
                continue
            takes_number.add(name)
            break
    assert takes_number <= _NUMBER_FIRST, takes_number - _NUMBER_FIRST


# ----------------------------------------------------------------- the result of a tensor-only method
# `y = feats[i].sigmoid()` where `feats` is a list (or anything the analysis cannot type): only a
# tensor has `sigmoid` among the values code usually holds, so `y` is a tensor (any other value
# would have raised), and the write into the output sigmoid saved is proven with a safe fix.

HEAD = """\
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 6, 1) for _ in range(2)])

    def forward(self, feats):
        out = []
        for i in range(2):
            y = self.convs[i](feats[i]).{method}()
            y[:, :2] = y[:, :2] * 2.0
            out.append(y)
        return out
"""


def test_the_result_of_a_tensor_only_method_is_a_tensor():
    got = found(HEAD.format(method="sigmoid"))
    assert [(c, line, s) for c, line, s, _ in got] == [("IPF104", 10, "safe")]
    # `sum` is numpy's too: no proof, so no safe fix of an unknown value
    assert found(HEAD.format(method="sum").replace("y[:, :2] = y[:, :2] * 2.0", "y += 1")) == []
    # a class of the file with a method of that name: the call may be that method
    body = HEAD.format(method="sigmoid") + "\n\nclass Gate:\n    def sigmoid(self):\n        return self\n"
    assert [s for c, line, s, _ in found(body, ("IPF0", "IPF1", "IPF2")) if line == 10] == ["manual"]  # unknown-type

    torch.manual_seed(0)
    convs = nn.ModuleList([nn.Conv2d(3, 6, 1) for _ in range(2)])

    def run():
        y = convs[0](torch.rand(1, 3, 4, 4)).sigmoid()
        y[:, :2] = y[:, :2] * 2.0
        y.sum().backward()

    assert raises_at_backward(run)


# ----------------------------------------------------------------- dtype promotion
# `x /= torch.linalg.norm(x, dim=-1, keepdim=True) + 1e-6` in a project with other dtypes: the
# operand is computed from x alone and Python numbers through ops that keep x's dtype, so
# `x = x / (...)` has x's dtype as the in-place form does: no promotion, a safe fix.

NORM = """\
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(4, 4).half()

    def forward(self, h, other):
        x = self.dense(h)
        x /= {operand}
        return x
"""


def test_an_operand_computed_from_the_target_alone_does_not_promote():
    def status(operand):
        got = [s for c, line, s, _ in found(NORM.format(operand=operand), ("IPF0", "IPF1", "IPF2")) if line == 8]
        return got[0] if got else None

    assert status("torch.linalg.norm(x, dim=-1, keepdim=True) + 1e-6") == "safe"
    assert status("x.pow(2).sum(-1, keepdim=True).sqrt()") == "safe"
    assert status("x.norm(dim=-1, keepdim=True).clamp_min(1e-6)") == "safe"
    # another tensor, a cast, or a dtype= keyword may promote: unsafe
    assert status("other.norm(dim=-1, keepdim=True)") == "unsafe"
    assert status("x.norm(dim=-1, keepdim=True).double()") == "unsafe"
    assert status("x.sum(-1, keepdim=True, dtype=torch.float64)") == "unsafe"
    assert status("torch.max(x, other)") == "unsafe"

    x = torch.rand(2, 4, dtype=torch.float16) + 0.5
    for y in (x / (torch.linalg.norm(x, dim=-1, keepdim=True) + 1e-6), x / x.pow(2).sum(-1, keepdim=True).sqrt()):
        assert y.dtype == torch.float16
    z = torch.rand(2, 4, dtype=torch.complex64)
    assert (z / torch.linalg.norm(z, dim=-1, keepdim=True)).dtype == torch.complex64


# ----------------------------------------------------------------- grad required by a helper
# `weights = init_params(n)` with `def init_params(size): return torch.randn(size).requires_grad_()`:
# every return of the helper makes a leaf that requires grad, so the name is one, and writing
# into it with grad on raises at once.

INIT = """\
def init_params(size, std=1.0):
    return (torch.randn(size) * std).requires_grad_()


def train(x):
    weights = init_params((4, 1))
    weights[0] *= 1.0001
    return (x @ weights).sum()
"""


def test_a_helper_that_returns_a_leaf_requiring_grad_makes_one():
    assert codes(INIT) == [("IPF105", 7)]
    # a helper with another return, or bound twice, proves nothing
    other = INIT.replace("    return (torch.randn(size) * std).requires_grad_()",
                         "    if std:\n        return (torch.randn(size) * std).requires_grad_()\n    return torch.zeros(size)")
    assert codes(other) == []
    assert codes(INIT + "\n\ninit_params = lambda size, std=1.0: torch.zeros(size)\n") == []

    def run():
        def init_params(size, std=1.0):
            return (torch.randn(size) * std).requires_grad_()

        weights = init_params((4, 1))
        weights[0] *= 1.0001

    try:
        run()
    except RuntimeError as error:
        assert "a leaf Variable that requires grad is being used in an in-place operation" in str(error)
    else:
        raise AssertionError("torch allowed the write")


# ----------------------------------------------------------------- what flows into a function
# A loss module's `forward(inputs, target)` called as `criterion(model(x), target)`: its input
# is a model output, so it requires grad; `xs * targets` saves `targets` for that gradient, and
# label smoothing written in place into `targets` afterwards breaks backward.

LOSS = """\
class Loss(nn.Module):
    def __init__(self, eps=0.1):
        super().__init__()
        self.log_softmax = nn.LogSoftmax(dim=-1)
        self.eps = eps

    def forward(self, inputs, target):
        log_preds = self.log_softmax(inputs)
        targets = torch.zeros_like(inputs).scatter_(1, target.unsqueeze(1), 1)
        xs = torch.exp(log_preds) * targets
        targets.mul_(1 - self.eps)
        return -(targets * log_preds).sum() + xs.sum()


def step(x, target):
    model = nn.Linear(6, 5)
    criterion = Loss()
    loss = criterion({given}, target)
    loss.backward()
"""


def test_a_forward_given_what_requires_grad_by_every_visible_call():
    got = found(LOSS.format(given="model(x)"))
    assert [(c, line) for c, line, _, _ in got] == [("IPF103", 11)]
    assert "for the gradient of `torch.exp(log_preds)`" in got[0][3] or "which requires grad" in got[0][3]
    # a constant input (nothing requires grad on the caller's side): no proof
    assert codes(LOSS.format(given="torch.zeros(4, 5)")) == []
    # a helper function given a model output in one call and a constant in another: no proof
    helper = """\
    def loss(scores, target):
        t = torch.zeros_like(scores).scatter_(1, target.unsqueeze(1), 1)
        xs = torch.exp(scores) * t
        t.mul_(0.9)
        return xs.sum()


    def step(x, target):
        model = nn.Linear(6, 5)
        a = loss(model(x), target)
        b = loss({other}, target)
        return a + b
    """
    assert codes(helper.format(other="model(x)")) == [("IPF103", 4)]
    assert codes(helper.format(other="torch.zeros(4, 5)")) == []

    torch.manual_seed(0)
    model = nn.Linear(6, 5)

    def run():
        inputs = model(torch.randn(4, 6))
        log_preds = torch.log_softmax(inputs, -1)
        targets = torch.zeros_like(inputs).scatter_(1, torch.tensor([0, 1, 2, 3]).unsqueeze(1), 1)
        xs = torch.exp(log_preds) * targets
        targets.mul_(0.9)
        (-(targets * log_preds).sum() + xs.sum()).backward()

    assert raises_at_backward(run)


def test_an_op_given_a_copy_made_by_advanced_indexing_saves_no_view():
    # `x[idx]` with idx from nonzero copies: the save is of the copy, and the write into x
    # afterwards leaves it alone (a 0-d index tensor would make a view; torch agrees)
    body = """\
    def group(masks, ids):
        out = masks.clone()
        for i in ids.unique():
            idx = torch.nonzero(ids == i, as_tuple=True)[0]
            part = torch.clamp(out[idx], max=-1.0)
            out[idx] = part
        return out
    """
    assert codes(body, ("IPF1", "IPF2")) == []
    assert codes(body.replace("out[idx], max", "out[0], max"), ("IPF1", "IPF2")) == [("IPF204", 6)]

    x = torch.rand(4, 3) * 2
    w = torch.rand(4, 3, requires_grad=True)
    out = x * w
    idx = torch.nonzero(torch.tensor([1, 0, 1, 0]) == 1, as_tuple=True)[0]
    part = torch.clamp(out[idx], max=0.5)
    out[idx] = part.detach()
    part.sum().backward()  # no error: clamp saved the copy
    assert x[torch.tensor(1)]._base is x and x[idx]._base is None
