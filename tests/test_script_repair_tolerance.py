"""Script repair's proof bounds each recorded entry by its own rounding (sound39v), as ``verify``
does: a small gradient entry changed by 1% beside a large noisy one is a difference; a variance
whose every entry is rounding (E[x^2] - E[x]^2 of values near 1000) computed in another order
is not, once the rounding probes (the reference script again rounded upward, then downward)
have measured that noise. Real interpreters, real torch, new scripts.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.rounding import probe_available  # noqa: E402
from codemod.runtime.script import Script, interpreters, run_script  # noqa: E402
from codemod.runtime.script_repair import ScriptRepair, Verdict, _measured_noise, judge  # noqa: E402

SPREAD = """\
import torch

torch.manual_seed(4)
pair = torch.rand(2, requires_grad=True)
data = torch.rand(5000) * 80.0 + torch.randn(5000) * 1000.0
for step in range(2):
    spread = pair[0] * data
    loss = spread.sum() + pair[1] * 0.5
    loss.backward()
"""
SPREAD_CHANGED = SPREAD.replace("pair[0] * data", "pair[0] * data.flip(0)").replace("pair[1] * 0.5", "pair[1] * 0.505")

VARIANCE = """\
import torch

torch.manual_seed(6)
gain = torch.rand(16, requires_grad=True)
readings = torch.randn(3000, 16) * 0.1 + 1000.0
for step in range(2):
    scaled = readings * gain
    spread = (scaled * scaled).mean(0) - scaled.mean(0) ** 2
    spread.sum().backward()
"""
VARIANCE_REORDERED = VARIANCE.replace("scaled = readings * gain", "scaled = readings.flip(0) * gain")


@pytest.fixture(scope="module")
def server():
    shared = interpreters(seed=True)
    yield shared
    if shared is not None:
        shared.close()


def _judged(tmp_path, server, text, new_text):
    (tmp_path / "train.py").write_text(text)
    script = Script(path="train.py", cwd=str(tmp_path))
    common = dict(mode="record", max_backward=2, seed=True, capture=True, workdir=str(tmp_path), server=server)
    reference = run_script(script, **common)
    repaired = run_script(script, sources={str(tmp_path / "train.py"): new_text}, **common)
    assert reference.finished and repaired.finished, (reference.error, repaired.error)
    strict = judge(reference, repaired)
    result = ScriptRepair(script, [], [], {}, {})
    noise = _measured_noise(result, reference.record, lambda direction: run_script(script, **common, rounding=direction))
    return strict, judge(reference, repaired, noise), result


@pytest.mark.skipif(not probe_available(), reason="this machine cannot set the rounding mode")
def test_a_small_gradient_entry_changed_beside_a_noisy_sum_is_a_difference(tmp_path, server):
    strict, measured, result = _judged(tmp_path, server, SPREAD, SPREAD_CHANGED)
    assert result.rounding.startswith("measured"), result.rounding
    assert strict[0] is Verdict.not_verified, strict[1]
    assert measured[0] is Verdict.not_verified, measured[1]
    assert any("grad" in r for r in measured[1]), measured[1]


@pytest.mark.skipif(not probe_available(), reason="this machine cannot set the rounding mode")
def test_a_variance_computed_in_another_order_is_verified_by_its_measured_noise(tmp_path, server):
    strict, measured, result = _judged(tmp_path, server, VARIANCE, VARIANCE_REORDERED)
    assert strict[0] is Verdict.not_verified, strict[1]  # each entry's own magnitude is not enough
    assert result.rounding.startswith("measured"), result.rounding
    assert measured[0] is Verdict.verified, measured[1]
