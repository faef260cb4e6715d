"""Stop 54 (prec54b): three false groups of the proven tier (bench/hazard_checks24/prec53b_probes.py,
prec53_probes.py), each a program that runs backward without the in-place error and must not be
proven, beside look-alikes that raise and stay proven:

- torch-parameter-no-grad (unsloth diffusion_rocm_compile.py:200): ``with torch.no_grad():`` on a
  ``torch`` the file does not bind to the module (the caller hands it in as a parameter), or on
  another object's ``no_grad``: grad is unknown under it, so a write there is not proven with grad
  on;
- attribute-operand-unknown (bioelectrics ionic/model.py:209): ``c * self._z`` where every
  assignment of ``self._z`` the class makes is a constant tensor (a property building
  ``torch.tensor([...])``): the product saves ``c`` for no gradient;
- imported-no-grad-helper (bert-score score.py:254, mergekit router.py:148): the tensor written is
  what a helper of another project file computes under ``torch.no_grad()``.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402


# ---------------------------------------------------------------- torch-parameter-no-grad
FILL = '''\
import contextlib
import torch
from torch import nn


class Backend:
    no_grad = staticmethod(torch.no_grad)
    inference_mode = staticmethod(torch.inference_mode)
    set_grad_enabled = staticmethod(torch.set_grad_enabled)
    enable_grad = staticmethod(torch.enable_grad)
    zeros = staticmethod(torch.zeros)


def fill(torch, lin):
    with CONTEXT:
        for p in lin.parameters():
            p.copy_(torch.zeros(p.shape))  # MARK
    return lin


def main():
    lin = nn.Linear(3, 2)
    fill(HANDED, lin)
    return lin(torch.randn(4, 3)).sum().backward()
'''

UNSEEN_OFF = [
    ("torch.no_grad()", "torch"),
    ("torch.inference_mode()", "torch"),
    ("torch.set_grad_enabled(False)", "torch"),
    ("torch.no_grad()", "Backend()"),
]

SEEN_ON = [
    ("torch.enable_grad()", "torch"),
    ("torch.inference_mode(False)", "torch"),
    ("torch.set_grad_enabled(True)", "torch"),
    ("contextlib.nullcontext()", "torch"),
    ("torch.enable_grad()", "Backend()"),
]


@pytest.mark.parametrize("context,handed", UNSEEN_OFF)
def test_a_grad_off_context_not_resolved_to_torch_proves_no_write(context, handed):
    _safe(FILL.replace("CONTEXT", context).replace("HANDED", handed))


@pytest.mark.parametrize("context,handed", SEEN_ON)
def test_other_contexts_on_a_torch_parameter_stay_proven(context, handed):
    _real(FILL.replace("CONTEXT", context).replace("HANDED", handed), message="leaf Variable")


SAVED = '''\
import torch


def step(torch, x):
    y = x.exp()
    with torch.no_grad():
        y.add_(1)  # MARK
    return y


def main():
    x = torch.randn(3, requires_grad=True)
    y = step(torch, x)
    return x
'''


def test_a_write_under_an_unseen_no_grad_is_not_proven_either():
    # (the program never differentiates y: it runs; the point is that the unknown grad mode is
    # read as real torch's no_grad is, not as grad on)
    _safe(SAVED)


# ---------------------------------------------------------------- imported-no-grad-helper
EMBED = '''\
import torch


def embed(model, x):
    with torch.no_grad():
        out = model(x)
    return out


def embed_inside(model, x):
    with torch.no_grad():
        return model(x)


def embed_batches(model, xs, mask):
    found = []
    with torch.no_grad():
        for x in xs:
            found.append(model(x))
    total = torch.cat(found, dim=0)
    return total, mask, len(xs)


def embed_with_grad(model, x):
    out = model(x)
    return out


def embed_then_scale(model, x):
    with torch.no_grad():
        out = model(x)
    return out * x.sum()


def embed_returns_mask(model, xs, mask):
    found = []
    with torch.no_grad():
        for x in xs:
            found.append(model(x))
    return torch.cat(found, dim=0), mask * 1.0
'''

CALLER = '''\
import torch
from torch import nn

from embedding import embed, embed_inside, embed_batches, embed_with_grad, embed_then_scale, embed_returns_mask


def scores(model, x):
    CALL
    emb.div_(torch.norm(emb, dim=-1).unsqueeze(-1))  # MARK
    return emb


def main():
    model, x = nn.Linear(3, 4), torch.randn(2, 3, requires_grad=True)
    emb = scores(model, x)
    ((emb * 2).sum() + x.sum()).backward()
    return x.grad
'''

FRESH_CALLS = [
    "emb = embed(model, x)",
    "emb = embed_inside(model, x)",
    "emb, mask, n = embed_batches(model, [x], x[:, :1])",
]

GRAD_CALLS = [
    "emb = embed_with_grad(model, x)",
    "emb = embed_then_scale(model, x)",
    "mask, emb = embed_returns_mask(model, [x], x)",
]


def _project_proven(caller: str) -> set:
    import pathlib
    import tempfile

    from codemod.config import Settings
    from codemod.engine.pipeline import process_source
    from codemod.engine.project import build_index

    with tempfile.TemporaryDirectory() as tmp:
        files = {"case.py": caller, "embedding.py": EMBED, "other.py": "import torch\n"}
        for name, text in files.items():
            pathlib.Path(tmp, name).write_text(text)
        index = build_index([str(pathlib.Path(tmp, n)) for n in files])
        result = process_source(caller.encode(), "case.py", Settings(), project=index, module_name="case")
    assert result.error is None, result.error
    return {f.span.line for f in result.findings if f.code.startswith("IPF1")}


def _run(caller: str) -> bool:
    """Whether ``main()`` raises the in-place error, with ``embedding`` importable."""
    import sys
    import types

    module = types.ModuleType("embedding")
    exec(compile(EMBED, "embedding.py", "exec"), module.__dict__)
    sys.modules["embedding"] = module
    try:
        space: dict = {"__name__": "case"}
        exec(compile(caller, "case.py", "exec"), space)
        space["main"]()
    except RuntimeError as error:
        return "modified by an inplace operation" in str(error)
    finally:
        del sys.modules["embedding"]
    return False


def _mark(caller: str) -> int:
    return next(i for i, line in enumerate(caller.splitlines(), 1) if line.endswith("# MARK"))


@pytest.mark.parametrize("call", FRESH_CALLS)
def test_what_another_files_helper_computes_under_no_grad_is_not_proven(call):
    program = CALLER.replace("CALL", call)
    assert not _run(program)
    assert _mark(program) not in _project_proven(program)


@pytest.mark.parametrize("call", GRAD_CALLS)
def test_another_files_helper_whose_value_carries_grad_stays_proven(call):
    program = CALLER.replace("CALL", call)
    assert _run(program)
    assert _mark(program) in _project_proven(program)


def test_a_name_bound_again_in_the_file_is_not_read_through_the_import():
    program = CALLER.replace("CALL", "emb = embed(model, x)").replace(
        "\n\ndef scores", "\n\ndef embed(model, x):\n    return model(x)\n\n\ndef scores")
    assert _run(program)
    assert _mark(program) in _project_proven(program)


def test_the_fresh_returns_fact_is_worked_out_later_and_kept_in_the_cache_entry():
    from codemod.analysis.indexing import collect
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.source import Source
    from codemod.engine.project import facts_from_json, facts_to_json

    def model():
        return SemanticModel(Source(EMBED.encode()))

    late = collect(model(), "embedding", frozenset({"embedding"}), later=True)
    pending = {f.qualname: f.fresh_returns for f in late.functions}
    assert pending["embedding.embed"] == ("?",) and pending["embedding.embed_with_grad"] is None
    assert late.returns_fresh("embedding.embed") == ("*",)
    assert late.returns_fresh("embedding.embed_batches") == ("0",)
    assert late.returns_fresh("embedding.embed_then_scale") is None
    assert late.returns_fresh("embedding.embed_returns_mask") == ("0",)
    now = collect(model(), "embedding", frozenset({"embedding"}))
    again = facts_from_json(facts_to_json(now), "key")
    assert {f.qualname: f.fresh_returns for f in again.functions} == {f.qualname: f.fresh_returns for f in late.functions}


# ---------------------------------------------------------------- attribute-operand-unknown
TISSUE = '''\
import torch
from torch import nn


class Profile:
    @property
    def z(self):
        return PROPERTY


class Tissue(nn.Module):
    def __init__(self, z=None):
        super().__init__()
        self.profile = Profile()
        HELD

    def vmem(self, c):
        return (c * USE).sum(dim=1)

    def with_vmem(self, state, v):
        x = state.clone()
        x[:, 0] = x[:, 0] + (v - self.vmem(x[:, :3]))  # MARK
        return x


def main():
    state, v = torch.rand(2, 5, requires_grad=True), torch.rand(2, requires_grad=True)
    tissue = MADE
    tissue.with_vmem(state * 1.0, v).sum().backward()
    return state.grad
'''

_CONST = "torch.tensor([1.0, -1.0, 2.0])"
_GRAD = "torch.tensor([1.0, -1.0, 2.0], requires_grad=True)"

HELD_CONSTANT = [  # (property, held, use, made)
    (_CONST, "self._z = self.profile.z", "self._z", "Tissue()"),
    (_CONST, f"self._z = {_CONST}", "self._z", "Tissue()"),
    (_CONST, "self._z = self.profile.z", "self._z[None, :]", "Tissue()"),
    (_CONST, "self._z = self.profile.z", "self._z.view(1, 3)", "Tissue()"),
]

HELD_GRAD = [
    (_GRAD, "self._z = self.profile.z", "self._z", "Tissue()"),
    (_CONST, f"self._z = {_GRAD}", "self._z", "Tissue()"),
    (_CONST, "self._z = self.profile.z if z is None else z", "self._z", f"Tissue({_GRAD})"),
    (_CONST, f"self._z = nn.Parameter({_CONST})", "self._z", "Tissue()"),
    (_CONST, "self._z = self.profile.z\n\n    def set_z(self, z):\n        self._z = z", "self._z",
     f"Tissue(); tissue.set_z({_GRAD})"),  # another method sets it: what it is handed is not seen constant
]


def _tissue(prop, held, use, made):
    return TISSUE.replace("PROPERTY", prop).replace("HELD", held).replace("USE", use).replace("MADE", made)


@pytest.mark.parametrize("prop,held,use,made", HELD_CONSTANT)
def test_a_product_saving_the_input_for_a_constant_the_object_holds_is_not_proven(prop, held, use, made):
    _safe(_tissue(prop, held, use, made))


@pytest.mark.parametrize("prop,held,use,made", HELD_GRAD)
def test_a_product_saving_the_input_for_what_requires_grad_stays_proven(prop, held, use, made):
    _real(_tissue(prop, held, use, made))
