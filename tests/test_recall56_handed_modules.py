"""A callable stored by a constructor (``self.sparse_linear = sparse_linear``) and called on a
method's input is followed where every construction of the class, in the file or in another
file of the run, hands it a torch module it builds (``nn.Linear(d, 1)``): its output is computed
from what it is handed, as a module built in the class is. It was "whatever the object was
handed" (a fresh sample as much as a function of the input): no evidence of grad, so a save of
what it computes was only possible. FlagEmbedding's BGE-M3 ``_sparse_embedding`` (set21/1902):
``token_weights = relu(self.sparse_linear(hidden_state))``, ``scatter_reduce`` of them (which saves
its result), then ``sparse_embedding[:, unused_tokens] *= 0.``.

Each look-alike that raises is run with torch; each control runs and stays unproven: a
construction handing in a function (``torch.rand_like``: fresh noise), a lambda, handed
values of both kinds, no construction seen.
"""

from __future__ import annotations

import pytest

from tests.programs import raises_proven, runs_unproven
from tests.test_recall39_callers import _findings, _gradients, _line, _project

HEAD = """import torch


class Embedder(torch.nn.Module):
    def __init__(self, sparse_linear, vocab=10):
        super().__init__()
        self.sparse_linear = sparse_linear
        self.vocab = vocab

    def sparse_embedding(self, hidden, ids):
        weights = torch.relu(self.sparse_linear(hidden))
        embedding = torch.zeros(ids.size(0), self.vocab, dtype=weights.dtype)
        embedding = embedding.scatter_reduce(dim=-1, index=ids, src=weights.squeeze(-1), reduce="amax")
        embedding[:, [0, 1]] *= 0.
        return embedding

"""

_WRITE = HEAD.splitlines().index("        embedding[:, [0, 1]] *= 0.") + 1

RAISING = {
    "linear-built-in-the-call": """
def main():
    model = Embedder(torch.nn.Linear(4, 1))
    hidden = torch.randn(2, 5, 4)
    ids = torch.randint(2, 10, (2, 5))
    model.sparse_embedding(hidden, ids).sum().backward()
""",
    "linear-bound-to-a-name-then-handed": """
def main():
    layer = torch.nn.Linear(4, 1)
    model = Embedder(layer, vocab=12)
    ids = torch.randint(2, 12, (2, 5))
    model.sparse_embedding(torch.randn(2, 5, 4), ids).sum().backward()
""",
}

CONTROLS = {
    "function-handed-in": """
def main():
    model = Embedder(torch.rand_like)
    w = torch.randn(3, requires_grad=True)
    e = model.sparse_embedding(torch.randn(2, 5, 1), torch.randint(2, 10, (2, 5)))
    (e.sum() * w).sum().backward()
""",
    "lambda-handed-in": """
def main():
    model = Embedder(lambda h: torch.ones(h.shape[:-1] + (1,)))
    w = torch.randn(3, requires_grad=True)
    e = model.sparse_embedding(torch.randn(2, 5, 4), torch.randint(2, 10, (2, 5)))
    (e.sum() * w).sum().backward()
""",
    "module-and-function-handed-in": """
def main():
    unused = Embedder(torch.nn.Linear(4, 1))
    model = Embedder(torch.rand_like)
    w = torch.randn(3, requires_grad=True)
    e = model.sparse_embedding(torch.randn(2, 5, 1), torch.randint(2, 10, (2, 5)))
    (e.sum() * w).sum().backward()
""",
}


def _marked(body: str) -> str:
    lines = (HEAD + body).splitlines()
    lines[_WRITE - 1] += "  # MARK"
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(RAISING))
def test_a_handed_torch_module_is_followed(name):
    raises_proven(_marked(RAISING[name]))


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_other_handed_callables_stay_unknown(name):
    runs_unproven(_marked(CONTROLS[name]))


def test_no_construction_seen_stays_unproven():
    source = _marked("")
    source += "\n\ndef main():\n    pass\n"
    runs_unproven(source)


MODEL = """\
    import torch
    import embedder


    def compute():
        torch.manual_seed(0)
        sparse_linear = torch.nn.Linear(4, 1)
        model = embedder.Embedder(sparse_linear)
        ids = torch.randint(2, 10, (2, 5))
        model.sparse_embedding(torch.randn(2, 5, 4), ids).sum().backward()
        return [float(v) for v in sparse_linear.weight.grad.flatten()]
"""

CONTROL_MODEL = """\
    import torch
    import embedder


    def compute():
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        model = embedder.Embedder(torch.rand_like)
        ids = torch.randint(2, 10, (2, 5))
        (model.sparse_embedding(torch.randn(2, 5, 1), ids).sum() * w).sum().backward()
        return [float(v) for v in w.grad]
"""


def test_a_module_handed_from_another_file_is_followed(tmp_path):
    _project(tmp_path, {"embedder.py": HEAD, "model.py": MODEL})
    assert _gradients(tmp_path, "model") is None  # backward raises the in-place error
    at = _line(tmp_path, "embedder.py", "embedding[:, [0, 1]] *= 0.")
    found = _findings(tmp_path, ["model.py", "embedder.py"], select="IPF1")
    assert [f[:2] for f in found] == [("embedder.py", at)], found


def test_a_function_handed_from_another_file_stays_unproven(tmp_path):
    _project(tmp_path, {"embedder.py": HEAD, "model.py": CONTROL_MODEL})
    assert _gradients(tmp_path, "model") is not None  # runs: the noise requires no grad, nothing is saved
    found = _findings(tmp_path, ["model.py", "embedder.py"], select="IPF1")
    assert found == [], found
