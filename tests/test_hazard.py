"""Hazard analysis: flags the conflicting op of every broken model and nothing in working ones."""

from __future__ import annotations

import pytest

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .test_locate import BROKEN, WORKING, marked


def hazards(path):
    result = process_source(path.read_bytes(), str(path), Settings())  # the default: hazards only
    assert result.error is None
    return result.findings


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_hazard_flags_the_conflicting_op(path):
    findings = hazards(path)
    modified = marked(path, "modified")
    assert any(f.code.startswith("IPF1") and f.span.line in modified for f in findings), findings


@pytest.mark.parametrize("path", WORKING, ids=lambda p: p.stem)
def test_working_models_have_no_hazard(path):
    assert hazards(path) == []


def test_blanket_selection_still_lists_the_harmless_candidates():
    path = next(p for p in WORKING if p.stem == "resnet_block")
    everything = process_source(path.read_bytes(), str(path), Settings(select=("ALL",))).findings
    assert {f.code for f in everything} == {"IPF001", "IPF002"}


def test_an_inplace_module_set_on_self_outside_a_class_is_a_cautious_hazard_not_a_crash():
    data = (b"import torch\nfrom torch import nn\n\n\ndef build(self, x):\n"
            b"    self.act = nn.ReLU(inplace=True)\n    y = torch.sigmoid(x)\n    return self.act(y)\n")
    result = process_source(data, "build.py", Settings())
    assert result.error is None
    assert [(f.code, f.span.line) for f in result.findings] == [("IPF102", 6)]
    assert "cannot be followed" in result.findings[0].message
