"""Issue 24 (stC43): integral tensors that autograd saves as an index or a target.

An op that differentiates one operand along an index keeps the index for backward and checks
its version there: ``cross_entropy``/``nll_loss`` (and their modules) keep the target,
``gather``/``index_select``/``scatter``/``index_add`` the index, ``embedding`` the ids,
``masked_fill``/``where`` the mask, ``x[i]`` the index tensors. Writing into that index in
place afterwards (``labels[labels == pad] = 0``, ``start_positions.clamp_(0, n)``,
``edge_index[1] += offset``) makes backward raise, whatever the index's dtype, as soon as the
other operand requires grad. Until now an integral written tensor was possible-only (nothing
told an index save apart from a save of the tensor as data). The table of such saves
(``codemod.analysis.index_saves.INDEX_SAVES``) is measured here with torch: every entry raises
when the data requires grad and the index is written, and does not when the data does not.

The probes are small programs of the group written from the public pattern (a loss over
labels then the padding masked in place, a QA head clamping its positions, a sparse
conversion shifting its edge index, a Q-learning pick by action index); each raises with torch
and is proven. The controls (a clone first, the data without grad, the write before the op,
the name rebound, an op outside the table) must not be proven.
"""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from codemod.config import Settings
from tests.programs import process_in_project, raises_inplace

# One runnable form per table entry: (data requires grad?) -> (output, index tensor).


def _x(grad: bool) -> torch.Tensor:
    return torch.randn(4, 5, requires_grad=grad)


def _col() -> torch.Tensor:
    return torch.tensor([[0], [1], [2], [3]])


def _target() -> torch.Tensor:
    return torch.tensor([1, 2, 0, 3])


def _mask() -> torch.Tensor:
    return torch.zeros(4, 5, dtype=torch.bool)


FORMS = {
    "cross_entropy": lambda g: (lambda t: (F.cross_entropy(_x(g), t), t))(_target()),
    "nll_loss": lambda g: (lambda t: (F.nll_loss(_x(g).log_softmax(-1), t), t))(_target()),
    "CrossEntropyLoss": lambda g: (lambda t: (nn.CrossEntropyLoss()(_x(g), t), t))(_target()),
    "NLLLoss": lambda g: (lambda t: (nn.NLLLoss()(_x(g).log_softmax(-1), t), t))(_target()),
    "gather": lambda g: (lambda i: (torch.gather(_x(g), 1, i), i))(_col()),
    "index_select": lambda g: (lambda i: (torch.index_select(_x(g), 0, i), i))(torch.tensor([0, 2])),
    "embedding": lambda g: (lambda i: (F.embedding(i, _x(g)), i))(torch.tensor([0, 2])),
    "masked_fill": lambda g: (lambda m: (_x(g).masked_fill(m, 0.0), m))(_mask()),
    "where": lambda g: (lambda m: (torch.where(m, _x(g), 0.0), m))(_mask()),
    "scatter": lambda g: (lambda i: (torch.zeros(4, 5).scatter(1, i, _x(g)[:, :1]), i))(_col()),
    "scatter_add": lambda g: (lambda i: (torch.zeros(4, 5).scatter_add(1, i, _x(g)[:, :1]), i))(_col()),
    "index_add": lambda g: (lambda i: (torch.zeros(4, 5).index_add(0, i, _x(g)[:2]), i))(torch.tensor([0, 2])),
    "masked_select": lambda g: (lambda m: (_x(g).masked_select(m), m))(_mask()),
}
# The other operands an entry differentiates (each needs the index for its gradient too).
MORE_FORMS = {
    "scatter_input": lambda g: (lambda i: (_x(g).scatter(1, i, 0.0), i))(_col()),
    "masked_fill_value": lambda g: (lambda m: (torch.zeros(4, 5).masked_fill(
        m, torch.tensor(1.0, requires_grad=g)), m))(_mask()),
    "where_other": lambda g: (lambda m: (torch.where(m, 1.0, _x(g)), m))(_mask()),
    "cross_entropy_probabilities": lambda g: (lambda t: (F.cross_entropy(_x(g), t), t))(torch.rand(4, 5)),
    "cross_entropy_0d": lambda g: (lambda t: (F.cross_entropy(torch.randn(5, requires_grad=g), t), t))(
        torch.tensor(1)),
    "embedding_int32": lambda g: (lambda i: (F.embedding(i, _x(g)), i))(torch.tensor([0, 2], dtype=torch.int32)),
    "gather_0d": lambda g: (lambda i: (torch.gather(torch.randn((), requires_grad=g), 0, i), i))(torch.tensor(0)),
    "subscript": lambda g: (lambda i: (_x(g)[i, i], i))(torch.tensor([0, 2])),
}
# Measured and left out: a 0-dim index tensor selects (saves nothing); only the source's
# gradient of scatter_add/index_add needs the index; take_along_dim saves a broadcast copy.
NOT_SAVED = {
    "subscript_0d": lambda g: (lambda i: (_x(g)[i], i))(torch.tensor(1)),
    "scatter_add_input": lambda g: (lambda i: (_x(g).scatter_add(1, i, torch.zeros(4, 1)), i))(_col()),
    "index_add_input": lambda g: (lambda i: (_x(g).index_add(0, i, torch.zeros(2, 5)), i))(torch.tensor([0, 2])),
    "take_along_dim": lambda g: (lambda i: (torch.take_along_dim(_x(g), i, 1), i))(_col()),
}


def _index_write_raises(form, grad: bool) -> bool:
    out, index = form(grad)
    index.copy_(index.clone())  # an in-place write (same values): the version counter moves
    try:
        if out.requires_grad:
            out.sum().backward()
    except RuntimeError as error:
        return "modified by an inplace operation" in str(error)
    return False


@pytest.mark.parametrize("op", sorted(FORMS))
def test_measured_form_raises_only_with_grad(op):
    """Each form raises at backward after the index is written, and only when the data requires grad."""
    assert _index_write_raises(FORMS[op], True)
    assert not _index_write_raises(FORMS[op], False)


@pytest.mark.parametrize("form", sorted(MORE_FORMS))
def test_more_forms_raise_only_with_grad(form):
    assert _index_write_raises(MORE_FORMS[form], True)
    assert not _index_write_raises(MORE_FORMS[form], False)


@pytest.mark.parametrize("form", sorted(NOT_SAVED))
def test_left_out_forms_do_not_raise(form):
    assert not _index_write_raises(NOT_SAVED[form], True)


def test_table_is_measured():
    """Every op the analysis treats as an index save has a measured form above."""
    from codemod.analysis.index_saves import INDEX_SAVES

    assert set(INDEX_SAVES) == set(FORMS)


HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"

PROBES = {
    "ce_labels_masked_after_loss": """\
        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(6, 5)

            def forward(self, h, labels):
                logits = self.proj(h)
                loss = F.cross_entropy(logits.view(-1, 5), labels.view(-1), ignore_index=-100)
                labels[labels == -100] = 0
                correct = (logits.argmax(-1) == labels).float().mean()
                return loss, correct


        def main():
            head = Head()
            loss, acc = head(torch.randn(2, 3, 6), torch.tensor([[1, 2, -100], [0, -100, 4]]))
            loss.backward()
        """,
    "qa_positions_clamped_after_loss_module": """\
        class QAHead(nn.Module):
            def __init__(self, d=8):
                super().__init__()
                self.qa = nn.Linear(d, 2)
                self.loss_fct = nn.CrossEntropyLoss(ignore_index=7)

            def forward(self, h, start_positions):
                start_logits = self.qa(h)[..., 0]
                loss = self.loss_fct(start_logits, start_positions)
                start_positions.clamp_(0, 7)
                return loss


        def main():
            head = QAHead()
            loss = head(torch.randn(3, 7, 8), torch.tensor([1, 7, 3]))
            loss.backward()
        """,
    "edge_index_shifted_after_indexing": """\
        def to_edges(adj, offset):
            edge_index = adj.nonzero().t()
            weight = adj[edge_index[0], edge_index[1]]
            edge_index[1] += offset
            return edge_index, weight


        def main():
            adj = torch.rand(3, 3, requires_grad=True)
            edge_index, weight = to_edges(adj, 1)
            weight.sum().backward()
        """,
    "q_values_gathered_then_actions_shifted": """\
        def main():
            net = nn.Linear(4, 3)
            actions = torch.randint(0, 3, (2, 1))
            chosen = net(torch.randn(2, 4)).gather(1, index=actions)
            actions += 1
            chosen.sum().backward()
        """,
    "token_ids_embedded_then_masked": """\
        def main():
            table = nn.Parameter(torch.randn(10, 4))
            ids = torch.tensor([[0, 3, 4]])
            e = F.embedding(ids, table)
            ids.masked_fill_(ids == 0, 1)
            e.sum().backward()
        """,
    "labels_masked_after_a_helper_loss": """\
        def token_loss(logits, labels):
            return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)


        def main():
            lm = nn.Linear(6, 5)
            labels = torch.tensor([[1, 2, -100], [0, -100, 4]])
            loss = token_loss(lm(torch.randn(2, 3, 6)), labels)
            labels[labels == -100] = 0
            loss.backward()
        """,
    "actions_shifted_after_a_method_picks_q": """\
        class Learner:
            def __init__(self):
                self.q = nn.Linear(4, 3)

            def chosen(self, obs, actions):
                return self.q(obs).gather(1, actions)

            def step(self, obs, actions):
                taken = self.chosen(obs, actions)
                actions += 1
                taken.sum().backward()


        def main():
            Learner().step(torch.randn(2, 4), torch.tensor([[0], [2]]))
        """,
    "rows_picked_by_index_tensor_then_shifted": """\
        def main():
            lin = nn.Linear(4, 4)
            rows = torch.tensor([0, 2])
            picked = lin(torch.randn(3, 4))[:, rows]
            rows += 1
            picked.sum().backward()
        """,
    "mask_of_masked_fill_updated": """\
        def main():
            lin = nn.Linear(4, 4)
            scores = lin(torch.randn(2, 4))
            mask = torch.zeros(2, 4, dtype=torch.bool)
            filled = scores.masked_fill(mask, -1e9)
            mask |= scores > 10
            filled.sum().backward()
        """,
}

# A scalar filled in by ``scatter`` (its ``value`` form, positional or keyword): the index is
# still saved (seen on rl4co, whose file the analysis stopped on with an internal error).
PROBES["scatter_scalar_value_then_index_shifted"] = """\
    def main():
        x = torch.randn(2, 3, requires_grad=True)
        idx = torch.zeros(2, 1, dtype=torch.long)
        y = (x * 2).scatter(-1, idx, 0.5)
        idx += 1
        y.sum().backward()
    """
PROBES["scatter_value_keyword_then_index_shifted"] = PROBES["scatter_scalar_value_then_index_shifted"].replace(
    "idx, 0.5)", "idx, value=0.5)")


CONTROLS = {
    "labels_cloned_first": PROBES["ce_labels_masked_after_loss"].replace(
        "labels[labels == -100] = 0", "labels = labels.clone()\n                labels[labels == -100] = 0"),
    "data_without_grad": PROBES["edge_index_shifted_after_indexing"].replace(
        "torch.rand(3, 3, requires_grad=True)", "torch.rand(3, 3)").replace(
        "weight.sum().backward()", "(weight * torch.ones(1, requires_grad=True)).sum().backward()"),
    "write_before_the_op": """\
        def main():
            proj = nn.Linear(6, 5)
            labels = torch.tensor([1, 2, -100, 4])
            labels[labels == -100] = 0
            loss = F.cross_entropy(proj(torch.randn(4, 6)), labels)
            loss.backward()
        """,
    "index_rebound_before_write": """\
        def main():
            net = nn.Linear(4, 3)
            actions = torch.randint(0, 3, (2, 1))
            chosen = net(torch.randn(2, 4)).gather(1, actions)
            actions = actions + 1
            actions += 1
            chosen.sum().backward()
        """,
    "take_along_dim_copies": """\
        def main():
            x = torch.randn(4, 5, requires_grad=True)
            idx = torch.tensor([[0], [1], [2], [3]])
            v = torch.take_along_dim(x, idx, 1)
            idx += 1
            v.sum().backward()
        """,
    "converted_copy_saved": """\
        def main():
            proj = nn.Linear(6, 5)
            labels = torch.tensor([1, 2, 0, 4], dtype=torch.int32)
            loss = F.cross_entropy(proj(torch.randn(4, 6)), labels.long())
            labels[labels == 0] = 1
            loss.backward()
        """,
    "own_method_named_gather": """\
        class Picker(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Linear(4, 3)

            def gather(self, q, dim, index):
                return q.sum(dim, keepdim=True) + index.shape[0]

            def forward(self, x, index):
                chosen = self.gather(self.net(x), 1, index)
                index += 1
                return chosen


        def main():
            Picker()(torch.randn(2, 4), torch.tensor([[0], [2]])).sum().backward()
        """,
    "scatter_add_input_only": """\
        def main():
            lin = nn.Linear(4, 4)
            index = torch.tensor([[0], [1]])
            out = lin(torch.randn(2, 4)).scatter_add(1, index, torch.zeros(2, 1))
            index += 1
            out.sum().backward()
        """,
    "zero_dim_index_selects": """\
        def main():
            lin = nn.Linear(4, 4)
            row = torch.tensor(1)
            picked = lin(torch.randn(3, 4))[row]
            row += 1
            picked.sum().backward()
        """,
    "index_of_unknown_rank": """\
        def pick(h, rows):
            picked = h[rows]
            rows += 1
            return picked


        def main():
            lin = nn.Linear(4, 4)
            picked = pick(lin(torch.randn(3, 4)), torch.tensor(1))
            picked.sum().backward()
        """,
    "helper_clones_its_labels": PROBES["labels_masked_after_a_helper_loss"].replace(
        "def token_loss(logits, labels):\n", "def token_loss(logits, labels):\n            labels = labels.clone()\n"),
    "helper_never_saves": PROBES["labels_masked_after_a_helper_loss"].replace(
        "F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)",
        "logits.sum() * (labels >= 0).sum()"),
    "matcher_through_an_unseen_similarity": """\
        class Matcher:
            def __init__(self, similarity_fn):
                self.similarity_fn = similarity_fn

            def __call__(self, boxes, anchors, k):
                quality = self.similarity_fn(boxes, anchors)
                _, idx = (boxes[:, None, 0] - anchors[None, :, 0]).abs().topk(k, dim=1, largest=False)
                candidates = torch.cat([idx, idx], dim=1)
                picked = quality.gather(1, candidates)
                for g in range(boxes.shape[0]):
                    candidates[g, :] += g * anchors.shape[0]
                return picked, candidates


        def main(boxes=None, anchors=None):
            boxes = torch.rand(2, 4) if boxes is None else boxes
            anchors = torch.rand(5, 4) if anchors is None else anchors
            matcher = globals()["Matcher"](lambda b, a: b @ a.T)  # (a call the analysis does not follow)
            return matcher(boxes, anchors, 2)
        """,
    "integral_data_gathered": """\
        def decode(value, transition):
            shape = (value.shape[0], value.shape[1], transition.shape[-1])
            best = torch.zeros(shape)
            steps = torch.zeros(shape, dtype=torch.long)
            scores = value + 0.0
            for i in range(1, shape[-2]):
                weights = best[..., i - 1, :, None] + transition + scores[..., i, None, :]
                best[..., i, :], steps[..., i, :] = torch.max(weights, -2)
            path = torch.zeros(shape[:-1], dtype=torch.long)
            path[..., -1] = torch.argmax(best[..., -1, :], -1)
            for i in range(shape[-2] - 1, 0, -1):
                path[..., i - 1] = torch.gather(steps[..., i, :], -1, path[..., i].unsqueeze(-1)).squeeze(-1)
            return path


        def main(value=None):
            value = torch.randn(2, 4, 3) if value is None else value
            return globals()["decode"](value, torch.randn(3, 3))  # (a call the analysis does not follow)
        """,
    "only_compared": """\
        def main():
            lin = nn.Linear(4, 3)
            out = lin(torch.randn(2, 4))
            actions = torch.tensor([[0], [2]])
            hit = out.gather(1, actions) > 0
            actions += 1
            out.sum().backward()
            return hit
        """,
    "grad_off": """\
        def main():
            net = nn.Linear(4, 3)
            actions = torch.randint(0, 3, (2, 1))
            with torch.no_grad():
                chosen = net(torch.randn(2, 4)).gather(1, actions)
            actions += 1
            return chosen
        """,
}


def _source(body: str) -> str:
    return HEADER + textwrap.dedent(body)


def _proven(body: str):
    result = process_in_project(_source(body), Settings(select=("IPF1",)))
    return [(f.code, f.reason) for f in result.findings]


NOT_YET: set = set()


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True)) if n in NOT_YET else n
                                  for n in sorted(PROBES)])
def test_probe_raises_and_is_proven(name):
    source = _source(PROBES[name])
    assert raises_inplace(source), "the probe must raise with torch"
    assert _proven(PROBES[name]), "the index save must be proven"


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_control_runs_and_is_not_proven(name):
    source = _source(CONTROLS[name])
    assert not raises_inplace(source), "the control must run"
    assert _proven(CONTROLS[name]) == []


EDGES_REFERENCE = PROBES["edge_index_shifted_after_indexing"].replace(
    "edge_index[1] += offset", "edge_index = torch.stack([edge_index[0], edge_index[1] + offset])").replace(
    "weight.sum().backward()", "weight.sum().backward()\n            return adj.grad, edge_index")


def test_edge_index_fix_gives_the_reference_gradients():
    """Default `fix` clones the index before the shift (`nonzero()` of a tensor is a tensor): the
    fixed program runs and gives the out-of-place reference's gradient and edges."""
    from tests.programs import fixed_source, run_program

    source = _source(PROBES["edge_index_shifted_after_indexing"])
    fixed = fixed_source(source, project=True)
    assert fixed != source and ".clone()" in fixed
    fixed = fixed.replace("weight.sum().backward()", "weight.sum().backward()\n    return adj.grad, edge_index")
    grad, edges = run_program(fixed)
    ref_grad, ref_edges = run_program(_source(EDGES_REFERENCE))
    assert torch.equal(grad, ref_grad) and torch.equal(edges, ref_edges)


def test_nonzero_kinds():
    """`x.nonzero()` of a tensor is a tensor; with `as_tuple=True` a tuple."""
    from codemod.analysis.kinds import Kind
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.source import Source

    source = Source(b"import torch\nx = torch.rand(3)\na = x.nonzero()\nb = x.nonzero(as_tuple=True)\n")
    model = SemanticModel(source)
    body = source.tree.body
    assert model.kind(body[2].value) is Kind.TENSOR  # type: ignore[attr-defined]
    assert model.kind(body[3].value) is not Kind.TENSOR  # type: ignore[attr-defined]
