"""The harness differentiates only the leaves that still require grad (issue 23, "the harness
runs what python runs").

A function target that uses a network, then freezes it (``p.requires_grad_(False)``, a
pretrained feature extractor in style transfer or a perceptual loss) and optimises an input: the
run saw the network's parameters as leaves before they were frozen. The harness's backward of the
outputs asked autograd for their gradients too, and ``torch.autograd.grad`` refuses a tensor that
does not require grad ("One of the differentiated Tensors does not require grad"): every side
failed, the fixed program as well, and nothing could be verified. python never asks for those.

Control: a wrong rewrite of the same program (the display's scaling dropped) is still NOT verified.
Real torch, a new program written from the style-transfer report's pattern.
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402
from codemod.runtime.verify import render_table, verify  # noqa: E402

FROZEN = '''\
    import torch
    import torch.nn as nn


    def compute():
        torch.manual_seed(0)
        encoder = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1))
        target = encoder(torch.rand(1, 3, 8, 8)).detach()
        for p in encoder.parameters():
            p.requires_grad_(False)
        image = torch.rand(1, 3, 8, 8, requires_grad=True)
        opt = torch.optim.SGD([image], lr=0.5)
        for _ in range(3):
            opt.zero_grad()
            loss = ((encoder(image) - target) ** 2).mean()
            loss.backward()
            opt.step()
        shown = image[0]
        shown.mul_(255.0)
        return {"shown": shown, "image": image.detach()}
'''


def test_a_frozen_network_s_parameters_do_not_break_the_harness(tmp_path):
    path = tmp_path / "frozen.py"
    path.write_text(textwrap.dedent(FROZEN))
    result = repair(f"{path}::compute", timeout=240)
    shown = render(result) + ("\n" + render_table(result.verification) if result.verification else "")
    assert "does not require grad" not in shown, shown
    assert result.verified, shown
    assert "no_grad" in result.repaired, shown


def test_a_wrong_rewrite_of_that_program_is_still_not_verified(tmp_path):
    path = tmp_path / "frozen.py"
    path.write_text(textwrap.dedent(FROZEN))
    wrong = textwrap.dedent(FROZEN).replace("    shown.mul_(255.0)\n", "")
    assert wrong != textwrap.dedent(FROZEN)
    report = verify(f"{path}::compute", rewritten_source=wrong, devices=["cpu"], timeout=240)
    assert not report.verified, render_table(report)


def test_the_report_says_which_compared_gradients_were_none_on_both_sides(tmp_path):
    """The frozen network's parameters get no gradient in either run: the comparison counts them
    (a rewrite that connected one would differ) and the report says they were none, so that
    "N gradient(s)" is not read as N gradients that carried values (review36)."""
    path = tmp_path / "frozen.py"
    path.write_text(textwrap.dedent(FROZEN))
    fixed = textwrap.dedent(FROZEN).replace("    shown.mul_(255.0)\n", "    with torch.no_grad():\n        shown.mul_(255.0)\n")
    assert fixed != textwrap.dedent(FROZEN)
    report = verify(f"{path}::compute", rewritten_source=fixed, devices=["cpu"], timeout=240)
    assert report.verified, render_table(report)
    compared = report.devices[0].compared
    assert compared.grads_none > 0 and compared.grads > compared.grads_none, compared
    assert f"({compared.grads_none} of them none on both sides" in compared.describe()
