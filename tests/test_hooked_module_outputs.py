"""A module's output made a leaf that requires grad by a forward hook (issue 24, family B).

``enable_input_require_grads`` (HF), PEFT/LoRA with gradient checkpointing and prompt tuning
install a hook doing ``output.requires_grad_(True)`` on a frozen embedding: its output is then a
leaf that requires grad, and ``x *= scale`` / ``x[mask] = v`` on it raises "a leaf Variable that
requires grad is being used in an in-place operation". Captum-style attributions return their
own leaf from the hook. Each program is written for this test (not a corpus case) and run with
torch: the raising ones raise, the fix (out of place, never ``no_grad``) runs and gives the
out-of-place program's gradients; the look-alikes that run stay silent."""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation"

DECODER = """\
import math

import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, vocab=12, d=6):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.scale = math.sqrt(d)
        self.mix = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab)

    def input_embeddings(self):
        return self.tok

    def enable_input_grads(self):
        def make_inputs_require_grad(module, args, output):
            output.requires_grad_(True)

        self.input_embeddings().register_forward_hook(make_inputs_require_grad)

    def forward(self, ids, soft):
        x = self.tok(ids)
        WRITE
        x = torch.cat([soft.expand(x.size(0), -1, -1), x], 1)
        return self.head(torch.tanh(self.mix(x)))


def main():
    torch.manual_seed(0)
    model = Decoder()
    FREEZE
    HOOK
    soft = nn.Parameter(torch.randn(1, 2, 6))
    ids = torch.tensor([[1, 4, 2], [3, 0, 7]])
    loss = model(ids, soft).logsumexp(-1).mean()
    loss.backward()
    return [loss.detach(), soft.grad]
"""

FROZEN = "model.requires_grad_(False)"
HOOKED = "model.enable_input_grads()"
WRITES = {"augassign": ("x *= self.scale", "x = x * self.scale"),
          "subscript": ("x[:, 0] = soft[0, 0]", "x = x.clone()\n        x[:, 0] = soft[0, 0]")}


def _program(write: str = WRITES["augassign"][0], freeze: str = FROZEN, hook: str = HOOKED) -> str:
    return DECODER.replace("WRITE", write).replace("FREEZE", freeze).replace("HOOK", hook)


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line, f.status.value) for f in result.findings if f.code.startswith("IPF1")]


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.allclose(g, w), (g, w)


@pytest.mark.parametrize("kind", WRITES)
def test_a_write_into_a_frozen_embedding_output_a_hook_makes_require_grad_is_proven_and_fixed(kind):
    write, out_of_place = WRITES[kind]
    source = _program(write)
    assert raises_inplace(source, message=_LEAF)
    assert [code for code, _, _ in _proven(source)] == ["IPF105"], _proven(source)
    fixed = fixed_source(source, project=True)
    assert "no_grad" not in fixed and fixed != source, fixed
    _same(run_program(fixed), run_program(_program(out_of_place)))


FREEZES = {
    "parameters-loop": "for p in model.parameters():\n        p.requires_grad = False",
    "named-parameters-loop": "for _, p in model.named_parameters():\n        p.requires_grad_(False)",
    "embedding-weight": "model.tok.weight.requires_grad_(False)",
}


@pytest.mark.parametrize("freeze", FREEZES.values(), ids=FREEZES.keys())
def test_every_way_of_freezing_the_hooked_embedding_proves_it(freeze):
    source = _program(freeze=freeze)
    assert raises_inplace(source, message=_LEAF)
    assert [code for code, _, _ in _proven(source)] == ["IPF105"]


RUNNING = {
    # the embedding still trains: its output is no leaf, the hook changes nothing
    "not-frozen": {"freeze": "pass"},
    # another part frozen: the embedding's weight still requires grad
    "other-part-frozen": {"freeze": "model.mix.requires_grad_(False)"},
    # frozen, then the embedding turned back on
    "turned-back-on": {"freeze": FROZEN + "\n    model.tok.requires_grad_(True)"},
    # the installer is never called
    "hook-not-installed": {"hook": "pass"},
}


@pytest.mark.parametrize("case", RUNNING.values(), ids=RUNNING.keys())
def test_working_look_alikes_stay_silent(case):
    source = _program(**case)
    run_program(source)  # runs
    assert _proven(source) == []
    assert fixed_source(source, project=True) == source


def test_a_hook_that_does_not_make_the_output_require_grad_proves_nothing():
    source = _program().replace("output.requires_grad_(True)", "print(output.shape)")
    run_program(source)
    assert _proven(source) == []


def test_a_hook_on_another_module_proves_nothing():
    source = _program().replace("self.input_embeddings().register_forward_hook", "self.mix.register_forward_hook")
    run_program(source)
    assert _proven(source) == []


ATTRIBUTION = """\
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.words = nn.Embedding(10, 4)
        self.pos = nn.Parameter(torch.randn(5, 4))
        self.out = nn.Linear(4, 3)

    def forward(self, ids):
        h = self.words(ids)
        WRITE
        return self.out(torch.relu(h)).sum(1)


def saliency(model, layer, ids):
    kept = []

    def swap(module, inputs, output):
        leaf = output.detach().requires_grad_()
        kept.append(leaf)
        return leaf

    handle = layer.register_forward_hook(swap)
    try:
        score = model(ids)[:, 0].sum()
        grad = torch.autograd.grad(score, kept[0])[0]
    finally:
        handle.remove()
    return grad


def main():
    torch.manual_seed(0)
    model = Tagger()
    ids = torch.tensor([[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]])
    return [saliency(model, model.words, ids)]
"""


def test_a_hook_returning_its_own_leaf_proves_the_write_whatever_the_parameters():
    source = ATTRIBUTION.replace("WRITE", "h += self.pos")
    assert raises_inplace(source, message=_LEAF)
    assert [code for code, _, _ in _proven(source)] == ["IPF105"]
    fixed = fixed_source(source, project=True)
    assert "h = h + self.pos" in fixed and "no_grad" not in fixed, fixed
    _same(run_program(fixed), run_program(ATTRIBUTION.replace("WRITE", "h = h + self.pos")))


def test_a_hook_returning_the_output_itself_proves_nothing():
    source = ATTRIBUTION.replace("WRITE", "h += self.pos").replace(
        "leaf = output.detach().requires_grad_()", "leaf = output")
    run_program(source)
    assert _proven(source) == []


def test_a_lambda_hook_making_the_output_require_grad_is_followed():
    source = _program(hook="model.tok.register_forward_hook(lambda mod, inp, out: out.requires_grad_())")
    assert raises_inplace(source, message=_LEAF)
    assert [code for code, _, _ in _proven(source)] == ["IPF105"]


PRETRAINED = {"frozen": ("nn.Embedding.from_pretrained(torch.randn(vocab, d))", True),
              "trained": ("nn.Embedding.from_pretrained(torch.randn(vocab, d), freeze=False)", False)}


@pytest.mark.parametrize("case", PRETRAINED, ids=PRETRAINED.keys())
def test_a_pretrained_embedding_is_frozen_unless_told(case):
    built, raises = PRETRAINED[case]
    source = _program(freeze="pass").replace("nn.Embedding(vocab, d)", built)
    assert raises_inplace(source, message=_LEAF) is raises
    assert bool(_proven(source)) is raises


def test_a_hooked_output_returned_after_the_update_returns_the_updated_copy():
    writer = """\
    def embed(self, ids):
        h = self.words(ids)
        h *= 2.0
        return h

    def forward(self, ids):
        h = self.embed(ids)"""
    source = ATTRIBUTION.replace("    def forward(self, ids):\n        h = self.words(ids)", writer).replace("WRITE", "")
    assert raises_inplace(source, message=_LEAF)
    fixed = fixed_source(source, project=True)
    assert "no_grad" not in fixed and fixed != source, fixed
    want = source.replace("h *= 2.0", "h = h * 2.0")
    _same(run_program(fixed), run_program(want))


TUNER = """
class InputGrads:
    def __init__(self, model):
        self.handle = model.tok.register_forward_hook(self._require_grad)

    def _require_grad(self, module, inputs, output):
        output.requires_grad_(True)
"""


def test_a_hook_method_of_an_object_the_file_constructs_is_followed():
    source = _program(hook="InputGrads(model)") + TUNER
    assert raises_inplace(source, message=_LEAF)
    assert [code for code, _, _ in _proven(source)] == ["IPF105"]


def test_a_hook_method_of_an_object_never_constructed_proves_nothing():
    source = _program(hook="pass") + TUNER
    run_program(source)
    assert _proven(source) == []


def test_a_hooked_output_another_name_still_reads_is_rebound_with_it():
    # `y` names the same tensor: in place it would see the scaling, so the fix rebinds both
    source = _program("y = x\n        x *= self.scale\n        x = x + y")
    assert raises_inplace(source, message=_LEAF)
    fixed = fixed_source(source, project=True)
    assert "x = y = x * self.scale" in fixed, fixed
    _same(run_program(fixed), run_program(_program("x = x * self.scale\n        y = x\n        x = x + y")))


def test_a_hooked_output_a_list_holds_gets_no_safe_fix():
    # the list keeps the tensor: a rebinding would hide the scaling from it
    source = _program("kept = [x]\n        x *= self.scale\n        x = x + kept[0]")
    assert raises_inplace(source, message=_LEAF)
    assert [(code, status) for code, _, status in _proven(source)] == [("IPF105", "unsafe")]
    assert fixed_source(source, project=True) == source


def test_a_model_moved_by_to_is_the_same_module():
    source = _program(freeze="model = model.to('cpu').requires_grad_(False)")
    assert raises_inplace(source, message=_LEAF)
    assert [code for code, _, _ in _proven(source)] == ["IPF105"]
