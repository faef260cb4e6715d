"""A name bound to a view of a tensor (or to what a helper hands back of it) sees an in-place
write into that tensor; rebinding the tensor out of place hides the write from it. Each form
below was a *safe* rewrite of `h.mul_(2)` that changed the program; torch shows the change."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from codemod.engine.pipeline import process_source  # noqa: E402

PROGRAM = """
import torch


def helper(x):
    return x[0]


drop = torch.nn.Dropout(0.5).eval()


def f(w):
    h = w * 2
    {bind}
    h.mul_(2)
    return a
"""
FORMS = [
    "a, b = h.tensor_split(2, 0)",
    "a, b = torch.hsplit(h, 2)",
    "a = torch.hsplit(h, 2)[0]",
    "a = h.tensor_split(2)[0]",
    "a = torch.select(h, 0, 0)",
    "a = h.data",
    "a = h.mT",
    "a, b = list(h)",
    "a = list(h)[0]",
    "a, b = tuple(h.select(0, i) for i in range(h.size(0)))",
    "a = helper(h)",
    "a = h.float()",
    "a = h.to(w.dtype)",
    "a = drop(h)",
    "a = torch.nn.functional.dropout(h, 0.5, training=False)",
    "a = torch.nn.Identity()(h)",
    "a = torch.flatten(h)",
]


def run(source: str):
    scope: dict = {}
    exec(compile(source, "m.py", "exec"), scope)
    return scope["f"](torch.arange(8.0).reshape(2, 4))


@pytest.mark.parametrize("bind", FORMS)
def test_a_write_seen_through_a_view_is_not_a_safe_rewrite(bind):
    source = PROGRAM.format(bind=bind)
    rewritten = source.replace("h.mul_(2)", "h = h.mul(2)")
    assert not torch.equal(run(source), run(rewritten)), "the rewrite changes what `a` holds"
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",)), fix=True)
    [finding] = [f for f in result.findings if f.code == "IPF003"]
    assert finding.status.value != "safe", (finding.status, finding.reason)
    assert "h.mul_(2)" in result.fixed if result.changed else True


def test_a_callee_nothing_is_known_of_may_hand_the_tensor_back():
    """``a = unknown(h)``: the callee may return ``h`` itself (an nn.Identity, a dropout in eval
    mode, a helper): not a safe rewrite; unsafe, with the reason."""
    source = "from lib import unknown\n" + PROGRAM.format(bind="a = unknown(h)")
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",)))
    [finding] = [f for f in result.findings if f.code == "IPF003"]
    assert (finding.status.value, finding.reason) == ("unsafe", "call-may-alias")


@pytest.mark.parametrize("bind", ["a = h.sum()", "a, b = h.max(0)", "a = torch.relu(h)", "a, b = 3, h.sum()",
                                  "a = len(h)", "a = torch.nn.Linear(4, 4)(h)"])
def test_fresh_results_keep_the_safe_rewrite(bind):
    source = PROGRAM.format(bind=bind)
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",)))
    # (`torch.nn.Linear(4, 4)(h)` saves `h` for its weight's gradient: the write is a proven hazard, IPF103)
    [finding] = [f for f in result.findings if f.code in ("IPF003", "IPF103")]
    assert finding.status.value == "safe"


SIBLINGS = """
import torch


def f(w):
    h = w * 2
    {view}
    {sibling}
    row.mul_(3)
    return top + 0
"""


@pytest.mark.parametrize("view, sibling", [
    ("row = h.narrow(0, 0, 1)", "top = h[0:2]"),
    ("row = h[0].detach()", "top = h[0:2].detach()"),
    ("row = h.t()", "top = h"),
    ("row = h[0]", "top = h.view(8)"),
    ("top = h[0:2]", "row = h.t()"),
])
def test_a_write_into_a_view_seen_through_another_view_of_its_tensor_is_not_a_safe_rewrite(view, sibling):
    """``row`` and ``top`` view the same tensor: a write into ``row`` is seen through ``top``,
    and rebinding ``row`` out of place hides it."""
    source = SIBLINGS.format(view=view, sibling=sibling)
    rewritten = source.replace("row.mul_(3)", "row = row.mul(3)")
    assert not torch.equal(run(source), run(rewritten)), "the rewrite changes what `top` holds"
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",)))
    [finding] = [f for f in result.findings if f.code == "IPF003"]
    assert finding.status.value != "safe", (finding.status, finding.reason)


def test_the_outputs_of_one_split_are_disjoint():
    source = SIBLINGS.format(view="row, top = h.tensor_split(2, 0)", sibling="")
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",)))
    [finding] = [f for f in result.findings if f.code == "IPF003"]
    assert finding.status.value == "safe", finding.reason


REPEATED = """
import torch


def f(w):
    h = torch.arange(8.0).reshape(2, 4) * 2
    {bind}
    {target} += 1
    {target} *= 3
    return {read} + {target}.sum()
"""


@pytest.mark.parametrize("bind, target, read", [
    ("a = h[0]", "a", "h"),  # the second write into a view, the tensor viewed read after
    ("a = h.view(8)", "a", "h"),
    ("a = h", "h", "a"),  # the second write into a tensor another name holds
    ("a = h.t()", "h", "a"),
])
def test_a_second_write_keeps_the_aliases_of_the_first(bind, target, read):
    """``a += 1`` keeps a tensor's object: after it, ``a`` is still the view (or the alias) it
    was, and a rebinding of the second write would hide that write from ``h``."""
    source = REPEATED.format(bind=bind, target=target, read=read)
    rewritten = source.replace(f"{target} *= 3", f"{target} = {target} * 3")
    assert not torch.equal(run(source), run(rewritten)), "the rewrite changes what the other name holds"
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",)), fix=True)
    second = [f for f in result.findings if f.code == "IPF001" and f.span.line == 9]
    if bind == "a = h":  # (fix24c) two local names, all the references there are: the safe fix rebinds both
        assert second and second[0].status.value == "safe", [(f.span.line, f.status, f.reason) for f in result.findings]
        assert "h = a = h * 3" in result.fixed and torch.equal(run(result.fixed), run(source))
        return
    assert second and second[0].status.value != "safe", [(f.span.line, f.status, f.reason) for f in result.findings]


CACHE = """
import torch


class Cache:
    def __init__(self):
        self.keys = torch.zeros(3, 2)
        self.length = torch.tensor(0)

    def update(self, k, pos):
        self.keys.index_copy_(0, pos, k)
        self.length.add_(1)
        return self.keys

    def seen(self):
        return self.length


def f():
    cache = Cache()
    keys = cache.update(torch.ones(1, 2), torch.tensor([0]))
    length = cache.seen()
    cache.update(torch.full((1, 2), 2.0), torch.tensor([1]))
    return keys.clone(), length.clone()
"""


def test_an_attribute_handed_out_keeps_its_object(tmp_path):
    """A cache updates its tensors in place on purpose: methods hand them out (``return
    self.keys``), and holders see later updates. Rebinding (``self.length = self.length.add(1)``)
    would leave them with the old tensor: unsafe (``held-elsewhere``), never a safe fix."""
    result = process_source(CACHE.encode(), "cache.py", Settings(select=("ALL",)), fix=True)
    found = {(f.span.line, f.status.value, f.reason) for f in result.findings}
    assert found == {(11, "unsafe", "held-elsewhere"), (12, "unsafe", "held-elsewhere")}, found
    assert not result.changed, "the safe tier leaves the cache alone"
    unsafe = process_source(CACHE.encode(), "cache.py", Settings(select=("ALL",), unsafe_fixes=True), fix=True)
    assert unsafe.changed
    (keys, length), (keys2, length2) = run_f(CACHE), run_f(unsafe.fixed)
    assert not (torch.equal(keys, keys2) and torch.equal(length, length2)), "the rewrite changes what holders see"


def run_f(source: str):
    scope: dict = {}
    exec(compile(source, "cache.py", "exec"), scope)
    return scope["f"]()


PARENT = """
import torch
from lib import Base


class Child(Base):
    def __init__(self):
        super().__init__()
        self.own = torch.zeros(2)

    def step(self):
        self.count.add_(1)
        self.own.add_(1)
        return self.count + self.own


def convert(old, new):
    new.count = old.count  # shares the tensor: not a binding of Child's own
    new.add_module("child", old)
"""


def test_an_attribute_no_code_of_the_module_binds_is_not_a_safe_rebinding():
    """``self.count`` was made by ``Base`` in another file, which may hand it out; ``self.own``
    is this class's own."""
    result = process_source(PARENT.encode(), "m.py", Settings(select=("ALL",)))
    found = {f.span.line: (f.status.value, f.reason) for f in result.findings if f.code == "IPF003"}
    assert found[12] == ("unsafe", "set-elsewhere")
    assert found[13][0] == "safe"


# An in-place method returns its receiver (``c = b.add_(1)`` is ``b``): a name bound to that
# result shares whatever ``b`` shares, a view's base included (sound35a, review35).
THROUGH_RESULT = """
import torch


def f(w):
    h = w * 2
    {bind}
    c = b.add_(1)
    c.mul_(3)
    return {ret}
"""


@pytest.mark.parametrize("bind", ["b = h.view(-1)", "b = h[0]", "b = h.float()",
                                  "g = h.t()\n    b = g.sub_(1)"])
def test_a_write_into_an_in_place_result_reaches_what_its_receiver_views(bind):
    source = THROUGH_RESULT.format(bind=bind, ret="h")
    rewritten = source.replace("c.mul_(3)", "c = c.mul(3)")
    assert not torch.equal(run(source), run(rewritten)), "the rewrite changes what `h` holds"
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",)), fix=True)
    [finding] = [f for f in result.findings if f.code == "IPF003" and f.span.line == 9 + bind.count("\n")]
    assert finding.status.value != "safe", (finding.status, finding.reason)


@pytest.mark.parametrize("bind, ret", [("b = h.clone()", "h"), ("b = h * 1", "h"), ("b = h.view(-1)", "c")])
def test_an_in_place_result_of_a_fresh_tensor_keeps_the_safe_rewrite(bind, ret):
    # `w` a tensor: `h.view(-1)` on a value of unknown kind may be another library's method that
    # keeps what it returns (kept54), and `c = b.add_(1)` says only that `b` is a tensor
    source = THROUGH_RESULT.format(bind=bind, ret=ret).replace("def f(w):", "def f(w: torch.Tensor):")
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",)), fix=True)
    [finding] = [f for f in result.findings if f.code == "IPF003" and f.span.line == 9]
    assert finding.status.value == "safe", (finding.status, finding.reason)
    assert torch.equal(run(source), run(result.fixed))
