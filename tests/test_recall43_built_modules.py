"""Family C (and A): modules made by builder functions (issue 24, stop 43).

Networks are often made by a module-level builder, not written in place: ``self.net =
build_mlp(obs_dim, 2 * act_dim)`` returning ``nn.Sequential(*layers)`` after appending
``nn.Linear`` layers, ``make_encoder(...)`` returning an ``nn.Sequential`` directly, a builder of
another file of the project. Where every ``return`` of the builder hands back a module that
surely owns parameters (a torch layer with parameters, an ``nn.Sequential`` given one, or
``nn.Sequential(*layers)`` where ``layers`` surely holds one: a list display or an append made
outside any loop or branch, the list used no other way; a static, class or plain method of the
class too, ``self._head(...)``, where no class of the file derives from it), what the module
returns requires grad
with grad on, as for ``nn.Linear`` written in place, and the builder's result is a module: its
call gives a tensor. So ``mu, log_std = self.net(obs).chunk(2, -1); log_std.clamp_(-20, 2)`` in a
sampling method (not the forward) is a write PyTorch refuses (IPF106), fixed as
``log_std = log_std.clamp(-20, 2)``.

The probes are bench/probes/stA43/ (none is a corpus case): each p* raises with torch and is
proven with a safe fix giving the out-of-place program's gradients; each n* runs and stays
unproven.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_recall39_callers import _findings, _fix

PROBES = Path(__file__).resolve().parent.parent / "bench" / "probes" / "stA43"


def _result(tmp_path, module: str = "model"):
    """What ``compute()`` returns, run in a fresh interpreter; None where it raises PyTorch's
    in-place error (a view written, a saved tensor modified, a leaf updated)."""
    run = subprocess.run([sys.executable, "-c", f"import json, {module}\n"
                          f"try:\n    print(json.dumps({module}.compute()))\n"
                          "except RuntimeError as e:\n"
                          "    assert 'inplace' in str(e) or 'in-place' in str(e), e\n    print('null')\n"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _place(tmp_path, probe: str) -> list:
    """The probe's files in ``tmp_path``, the checked module named model.py."""
    source = PROBES / probe
    if source.is_dir():
        for f in source.glob("*.py"):
            shutil.copy(f, tmp_path / f.name)
        return sorted(f.name for f in source.glob("*.py"))
    shutil.copy(PROBES / f"{probe}.py", tmp_path / "model.py")
    return ["model.py"]


def _lines(tmp_path, writes) -> list:
    text = [s.strip() for s in (tmp_path / "model.py").read_text().splitlines()]
    return [text.index(w) + 1 for w in writes]


PROVEN = [
    ("p1_actor_mlp_builder", {"log_std.clamp_(-5.0, 2.0)": "log_std = log_std.clamp(-5.0, 2.0)"}),
    ("p2_vae_encoder_builder", {"logvar.clamp_(min=-10.0, max=10.0)": "logvar = logvar.clamp(min=-10.0, max=10.0)"}),
    ("p3_dueling_head_builder_other_file", {"adv -= adv.mean(-1, keepdim=True)": "adv = adv - adv.mean(-1, keepdim=True)"}),
    ("p4_box_regressor_builder", {"dw.clamp_(max=4.0)": "dw = dw.clamp(max=4.0)",
                                  "dh.clamp_(max=4.0)": "dh = dh.clamp(max=4.0)"}),
    ("p5_critic_builder_method", {"high += low.detach().abs()": "high = high + low.detach().abs()"}),
]


@pytest.mark.parametrize("probe, writes", PROVEN, ids=[p for p, _ in PROVEN])
def test_a_view_of_what_a_built_module_returns_is_proven_and_fixed(tmp_path, probe, writes):
    names = _place(tmp_path, probe)
    found = [f for f in _findings(tmp_path, names) if f[2].startswith("IPF1")]
    assert [(f[0], f[1], f[2], f[3]) for f in found] == [
        ("model.py", line, "IPF106", "safe") for line in _lines(tmp_path, writes)], found
    assert _result(tmp_path) is None  # the original raises
    _fix(tmp_path, names)
    fixed = _result(tmp_path)
    text = (tmp_path / "model.py").read_text()
    for write, out_of_place in writes.items():
        text = text.replace(write, out_of_place)
    (tmp_path / "model.py").write_text(text)
    want = _result(tmp_path)
    assert want is not None and fixed == want


NEGATIVE = ["n1_loop_only_builder", "n2_parameter_free_builder", "n3_no_grad_sampling", "n4_frozen_builder",
            "n5_overridden_builder_method"]


@pytest.mark.parametrize("probe", NEGATIVE)
def test_look_alikes_run_and_stay_unproven(tmp_path, probe):
    names = _place(tmp_path, probe)
    assert _result(tmp_path) is not None  # runs
    assert [f for f in _findings(tmp_path, names) if f[2].startswith("IPF1")] == []


# ---------------------------------------------------------------- a saved view outlives its name

FORMER_VIEWS = [
    ("p6_class_token_refined_in_place", {"x[:, :1] = cls": "x = torch.cat([cls, x[:, 1:]], dim=1)"}),
    ("p7_partial_channels_updated", {"feat[..., :self.d] = h": "feat = torch.cat([h, feat[..., self.d:]], dim=-1)"}),
    ("p8_memory_slot_gated", {"mem[:, i] = slot": "mem = torch.cat([mem[:, :i], slot.unsqueeze(1), mem[:, i + 1:]], dim=1)"}),
]


@pytest.mark.parametrize("probe, writes", FORMER_VIEWS, ids=[p for p, _ in FORMER_VIEWS])
def test_a_view_saved_before_its_name_is_bound_again_is_proven_and_fixed(tmp_path, probe, writes):
    """``m = x[:, 0]; m = m + f(norm(m)); x[:, 0] = m``: at the write ``m`` is no view of ``x``,
    but what the norm saved is (``hazard.FormerViews``); the fix's gradients are those of the
    program building the result out of place."""
    names = _place(tmp_path, probe)
    found = [f for f in _findings(tmp_path, names) if f[2].startswith("IPF1")]
    assert [(f[0], f[1], f[2], f[3]) for f in found] == [
        ("model.py", line, "IPF104", "safe") for line in _lines(tmp_path, writes)], found
    assert _result(tmp_path) is None
    _fix(tmp_path, names)
    fixed = _result(tmp_path)
    text = (tmp_path / "model.py").read_text()
    for write, out_of_place in writes.items():
        text = text.replace(write, out_of_place)
    (tmp_path / "model.py").write_text(text)
    want = _result(tmp_path)
    assert want is not None and fixed is not None
    assert len(fixed) == len(want) and all(
        all(abs(a - b) <= 1e-6 * (1 + abs(b)) for a, b in zip(f, w)) and len(f) == len(w) for f, w in zip(fixed, want))


@pytest.mark.parametrize("probe", ["n6_copied_class_token", "n7_view_not_saved", "n8_base_rebound_before_write",
                                   "n9_gathered_columns_copy"])
def test_former_view_look_alikes_run_and_stay_unproven(tmp_path, probe):
    names = _place(tmp_path, probe)
    assert _result(tmp_path) is not None
    assert [f for f in _findings(tmp_path, names) if f[2].startswith("IPF1")] == []
