"""Issue 24 (migration sweep, mig40): the inputs of the sweep cases added for the spots no model
case reached. A padding attention mask (``tfcpad:`` cases: the audio classifiers' masked
pooling) pads one row and leaves inputs it cannot mask alone; the grouped routers' config is a
copy (the experts of the same file are built from the original) with the group-limited method
only where the router has one. Plain tensors and namespaces: no model library is needed."""

from __future__ import annotations

import pathlib
import sys
import types

import pytest

torch = pytest.importorskip("torch")

BENCH = pathlib.Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))
    try:
        from migration import sweep_modules, sweep_reach
        yield sweep_reach, sweep_modules
    finally:
        sys.path.remove(str(BENCH))


def test_padded_masks_the_last_quarter_of_the_second_row(bench):
    sweep_reach, _ = bench
    values = torch.randn(2, 4000)
    got = sweep_reach.padded({"input_values": values, "labels": torch.tensor([1, 0])})
    mask = got["attention_mask"]
    assert mask.shape == (2, 4000) and mask.dtype == torch.long
    assert mask[0].all() and mask[1, :3000].all() and not mask[1, 3000:].any()
    assert got["input_values"] is values and got["labels"].tolist() == [1, 0]


def test_padded_leaves_what_it_cannot_mask(bench):
    sweep_reach, _ = bench
    given = {"input_ids": torch.ones(2, 5, dtype=torch.long), "attention_mask": torch.ones(2, 5)}
    assert sweep_reach.padded(given) is given  # a mask already given
    features = {"input_features": torch.randn(2, 80, 30)}
    assert sweep_reach.padded(features) is features  # frames on an axis a 2-D mask does not name
    choices = {"input_ids": torch.ones(2, 2, 5, dtype=torch.long)}
    assert sweep_reach.padded(choices) is choices  # multiple choice: 3-D ids


def test_grouped_router_config_is_a_copy(bench):
    _, sweep_modules = bench
    cfg = types.SimpleNamespace(n_group=1, topk_group=1, n_routed_experts=4, num_experts_per_tok=1,
                                topk_method="greedy", hidden_size=16)
    greedy = sweep_modules._grouped(cfg, "if self.topk_method == 'greedy': ...")
    limited = sweep_modules._grouped(cfg, "elif self.topk_method == 'group_limited_greedy': ...")
    assert (cfg.n_group, cfg.n_routed_experts, cfg.topk_method) == (1, 4, "greedy")  # untouched
    assert (greedy.n_group, greedy.topk_group, greedy.n_routed_experts, greedy.num_experts_per_tok) == (2, 1, 8, 2)
    assert greedy.topk_method == "greedy" and limited.topk_method == "group_limited_greedy"
    assert not hasattr(greedy, "num_experts")  # only the names the config has


# ---- the unsafe tier cloned a model output (a dict), found by the sweep ---------------------------
# transformers/utils/output_capturing.py: `outputs = func(self, ...)` (a ModelOutput, dict-like),
# then `outputs[key] = tuple(...)` in a loop. IPF004 gives a target of unknown kind no fix in any
# tier (`.clone()` fails on a dict: docs/fix-safety.md), but where the loop also called a function
# with another argument, the unsafe tier rewrote it to `outputs = outputs.clone()`, and every
# transformers model that collects hidden states died with "'BaseModelOutput' object has no
# attribute 'clone'" (the sweep's unsafe audio classifiers).

CAPTURE = """\
import torch


class Output(dict):
    pass


def wrapper(config, func, x, keys):
    try:
        outputs = func(x)
    finally:
        pass
    for key in keys:
        if key == "hidden":
            tie = getattr(config, "tie", None)
        outputs[key] = (x,)
    return outputs


def main():
    x = torch.ones(3, requires_grad=True)
    out = wrapper(object(), lambda t: Output(last=t * 2), x, ["hidden", "attn"])
    out["last"].sum().backward()
    return sorted(out), x.grad
"""


def test_unsafe_tier_leaves_a_write_into_an_unknown_dict_to_the_hand():
    from codemod.config import Settings
    from tests.programs import fixed_source, run_program
    unsafe = Settings(select=("ALL",), unsafe_fixes=True)
    fixed = fixed_source(CAPTURE, unsafe)
    assert "outputs.clone()" not in fixed
    keys, grad = run_program(fixed)
    assert keys == ["attn", "hidden", "last"] and grad.tolist() == [2.0, 2.0, 2.0]
