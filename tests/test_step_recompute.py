"""The step-order repair in the recompute meaning (issue 25, ``--meaning recompute``).

Real torch, real libcst. An optimizer step between a forward and its backward; the recompute
meaning differentiates through the updated parameters: the statements that build the later
loss, from the stepped module's call onward, run again right before its backward
(``fixes.step_recompute``), verified against the original run with that part of the forward
replayed after the step (``runtime.recompute``). Each test fails without them (the option, the
rewrite or the reference is missing).
"""

from __future__ import annotations

import importlib.util
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.recompute import RecomputeAfterStep  # noqa: E402
from codemod.runtime.repair import repair  # noqa: E402
from codemod.runtime.verify import verify  # noqa: E402

from .conftest import FIXTURES  # noqa: E402

GAN_SCRIPT = FIXTURES / "scripts" / "gan_recompute.py"
ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}


def _losses(text: str):
    return [float(x) for x in re.findall(r"loss_[DG] (\S+)", text)]


def test_gan_script_repaired_with_recompute_equals_the_hand_written_recipe(tmp_path):
    """``repair --meaning recompute --write``: the generator's loss is built again on a fresh
    ``D(fake)`` after D's step; the losses of 3 steps equal the recipe written by hand (D on
    ``fake.detach()``, step D, then G's loss on a fresh ``D(fake)``)."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copy(GAN_SCRIPT, root / GAN_SCRIPT.name)
    done = subprocess.run([sys.executable, "-m", "codemod", "repair", GAN_SCRIPT.name, "--steps", "3",
                           "--meaning", "recompute", "--write"], cwd=root, env=ENV, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "Verdict: verified against recompute" in done.stdout, done.stdout
    assert "meaning: recompute" in done.stdout
    repaired = (root / GAN_SCRIPT.name).read_text()
    assert "retain_graph" not in repaired and ".detach()" not in repaired.replace("fake.detach()", "")
    # The hand-written recipe: G's loss built after D's step.
    source = GAN_SCRIPT.read_text()
    build = "        pred_fake = D(fake)\n        loss_G = bce(pred_fake, ones)\n"
    assert build in source
    by_hand = source.replace(build, "").replace("        opt_G.zero_grad()\n", "        opt_G.zero_grad()\n" + build)
    (root / "by_hand.py").write_text(by_hand)
    got = subprocess.run([sys.executable, GAN_SCRIPT.name, "--steps", "3"], cwd=root, env=ENV,
                         capture_output=True, text=True, timeout=300)
    want = subprocess.run([sys.executable, "by_hand.py", "--steps", "3"], cwd=root, env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert want.returncode == 0 and got.returncode == 0, (got.stderr, want.stderr)
    a, b = _losses(got.stdout), _losses(want.stdout)
    assert len(a) == 6 and all(math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-7) for x, y in zip(a, b)), (a, b)


ACTOR_CRITIC = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def compute():
        torch.manual_seed(0)
        actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2), nn.Tanh())
        critic = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
        opt_actor = torch.optim.Adam(actor.parameters(), lr=1e-2)
        opt_critic = torch.optim.Adam(critic.parameters(), lr=1e-2)
        out = {}
        for step in range(3):
            s = torch.randn(8, 4)
            r = torch.randn(8, 1)
            a = actor(s)
            q_taken = critic(torch.cat([s, a.detach()], 1))
            critic_loss = ((q_taken - r) ** 2).mean()
            q = critic(torch.cat([s, a], 1))
            actor_loss = -q.mean()
            opt_critic.zero_grad()
            critic_loss.backward()
            opt_critic.step()
            opt_actor.zero_grad()
            actor_loss.backward()
            opt_actor.step()
            out[f"actor_loss{step}"] = actor_loss.detach().clone()
        out.update({"actor." + n: p.detach().clone() for n, p in actor.named_parameters()})
        out.update({"critic." + n: p.detach().clone() for n, p in critic.named_parameters()})
        return out
    ''')


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_actor_critic_recompute_repair_is_the_critic_first_recipe(tmp_path):
    """The critic steps before the actor's backward: in the recompute meaning the actor's loss
    is built again on the stepped critic (the maintainers' usual fix), verified against the
    replayed original; and each meaning's rewrite differs from the other's reference."""
    path = tmp_path / "ac.py"
    path.write_text(ACTOR_CRITIC)
    result = repair(f"{path}::compute", meaning="recompute")
    assert result.verified, [(d.reference, d.reasons) for d in result.verification.devices]
    assert all(d.reference == "recompute meaning" for d in result.verification.devices)
    assert "        q = critic(torch.cat([s, a], 1))\n        actor_loss = -q.mean()\n        actor_loss.backward()" \
        in result.repaired
    assert "retain_graph" not in result.repaired
    repaired = tmp_path / "repaired.py"
    repaired.write_text(result.repaired)
    by_hand = tmp_path / "by_hand.py"
    by_hand.write_text(ACTOR_CRITIC.replace(
        "        q = critic(torch.cat([s, a], 1))\n        actor_loss = -q.mean()\n", "").replace(
        "        opt_actor.zero_grad()\n",
        "        opt_actor.zero_grad()\n        q = critic(torch.cat([s, a], 1))\n        actor_loss = -q.mean()\n"))
    got, want = _load(repaired, "ac_repaired").compute(), _load(by_hand, "ac_by_hand").compute()
    assert set(got) == set(want)
    for key in want:
        assert torch.allclose(got[key], want[key], rtol=1e-5, atol=1e-6), key
    # The references tell the meanings apart: the recompute rewrite is not "as computed", and
    # the as-computed rewrite is not "recompute".
    assert not verify(f"{path}::compute", rewritten_source=result.repaired, meaning="as-computed").verified
    computed = repair(f"{path}::compute")
    assert computed.verified and computed.repaired != result.repaired
    assert not verify(f"{path}::compute", rewritten_source=computed.repaired, meaning="recompute").verified


def test_the_replayed_reference_equals_the_recipe_by_hand():
    """``RecomputeAfterStep`` on the broken GAN loop computes what the recipe computes by hand."""
    import torch.nn as nn

    def run(fixed: bool):
        torch.manual_seed(0)
        G = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 5))
        D = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
        opt_G, opt_D = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.Adam(D.parameters(), lr=0.01)
        losses = []
        for _ in range(3):
            fake = G(torch.randn(6, 3))
            loss_D = -(torch.log(D(torch.randn(6, 5))) + torch.log(1 - D(fake.detach()))).mean()
            if not fixed:
                loss_G = torch.log(1 - D(fake)).mean()
            opt_D.zero_grad()
            loss_D.backward()
            opt_D.step()
            if fixed:
                loss_G = torch.log(1 - D(fake)).mean()
            opt_G.zero_grad()
            loss_G.backward()
            opt_G.step()
            losses.append(loss_G.item())
        return losses, [p.detach().clone() for p in G.parameters()]

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(False)
    with RecomputeAfterStep() as replay:
        got = run(False)
    want = run(True)
    assert replay.unfit is None and len(replay.replays) == 3
    assert got[0] == pytest.approx(want[0], rel=1e-6)
    assert all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(got[1], want[1]))


NOT_REPEATABLE = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def compute():
        torch.manual_seed(0)
        G = nn.Linear(3, 5)
        D = nn.Sequential(nn.Linear(5, 1), nn.Sigmoid())
        opt_G = torch.optim.SGD(G.parameters(), lr=0.1)
        opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
        fake = G(torch.randn(4, 3))
        loss_D = -torch.log(1 - D(fake.detach())).mean()
        loss_G = -torch.log(D(fake)).mean()
        for weight in (0.1, 0.2):
            loss_G = loss_G + weight * fake.abs().mean()
        opt_D.zero_grad()
        loss_D.backward()
        opt_D.step()
        opt_G.zero_grad()
        loss_G.backward()
        opt_G.step()
        return {"w": G.weight.detach().clone()}
    ''')


def test_recompute_that_cannot_apply_says_why_and_writes_nothing(tmp_path):
    """Part of the loss is built in a loop after D's call (a statement the rewrite does not run
    again): no recompute rewrite, the reason said, nothing written; the default meaning still
    repairs it."""
    path = tmp_path / "aug.py"
    path.write_text(NOT_REPEATABLE)
    done = subprocess.run([sys.executable, "-m", "codemod", "repair", f"{path.name}::compute", "--meaning",
                           "recompute", "--write"], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "no recompute rewrite" in done.stdout and "cannot repeat" in done.stdout, done.stdout
    assert path.read_text() == NOT_REPEATABLE
    assert repair(f"{path}::compute").verified  # as computed: the step moved or the gradients taken early


def _recompute_text(source: str, step: str, save: str):
    """The recompute rewrite of ``source`` (libcst only, nothing run): the step at the line that
    holds ``step``, the parameter saved at the line that holds ``save``."""
    import libcst as cst

    from codemod.fixes.apply import FixApplier
    from codemod.fixes.from_run import Positions
    from codemod.runtime import step_order

    lines = source.splitlines()
    at = next(i for i, t in enumerate(lines, 1) if step in t)
    saved = next(i for i, t in enumerate(lines, 1) if save in t)
    where = Positions(cst.MetadataWrapper(cst.parse_module(source)))
    found, why = step_order.recompute_candidates(where, at, True, [saved])
    return (where.module.visit(FixApplier([found[0][0]])).code if found else None), why


CHAINS = textwrap.dedent('''\
    def train(G, D, opt_D, opt_G, z, real, train_g):
        fake = G(z)
        loss_D = D(real).mean() - D(fake.detach()).mean()
        g_loss = 0
        g_loss += -D(fake).mean()
        g_loss += 0.1 * fake.abs().mean()
        opt_D.zero_grad()
        loss_D.backward()
        opt_D.step()
        if train_g:
            opt_G.zero_grad()
            g_loss.backward()
            opt_G.step()
    ''')


def test_recompute_rebuilds_an_added_up_loss_from_its_start_inside_the_if():
    """``g_loss = 0; g_loss += ...``: the chain from its start runs again, inside the ``if`` that
    holds the backward; a chain that starts from an alias (changed in place by ``+=``) is refused."""
    fixed, why = _recompute_text(CHAINS, "opt_D.step()", "g_loss += -D(fake)")
    assert fixed is not None, why
    assert ("        opt_G.zero_grad()\n        # inplacefix (recompute)" in fixed
            and "        g_loss = 0\n        g_loss += -D(fake).mean()\n"
                "        g_loss += 0.1 * fake.abs().mean()\n        g_loss.backward()" in fixed), fixed
    assert fixed.count("fake = G(z)") == 1  # the generator's forward is not repeated
    aliased = CHAINS.replace("g_loss = 0", "g_loss = G.loss")
    fixed, why = _recompute_text(aliased, "opt_D.step()", "g_loss += -D(fake)")
    assert fixed is None and "keeps the first addition" in why


PLAIN_FAMILY_A = textwrap.dedent('''\
    import torch


    def compute():
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        h = torch.sigmoid(w)
        h.mul_(2)
        h.sum().backward()
        return {"g": w.grad}
    ''')


def test_the_recompute_meaning_leaves_a_conflict_without_a_step_to_the_snapshot_oracle(tmp_path):
    """``--meaning`` is the meaning of step-order repairs only: an in-place write into a saved
    tensor with no optimizer step anywhere is verified as by default (the recompute reference
    replays nothing there and fails as the original does: no reference at all) (review31)."""
    path = tmp_path / "plain.py"
    path.write_text(PLAIN_FAMILY_A)
    result = repair(f"{path}::compute", meaning="recompute")
    assert result.verified, [(d.reference, d.reasons) for d in result.verification.devices]
    assert result.repaired == repair(f"{path}::compute").repaired


VIEW_THEN_READ = textwrap.dedent('''\
    import torch

    x = torch.randn(4, 3, requires_grad=True)
    h = x * 2
    a, b = h.chunk(2)
    a.mul_(2)
    print(float(h.sum()))
    h.sum().backward()
    ''')


def test_the_recompute_reference_keeps_the_view_copies_verdict_that_they_do_not_fit(tmp_path):
    """A script repaired for a view conflict and a step-order one takes both references at once
    (``view_copies`` and ``recompute``): that the copies do not fit (the tensor viewed is read
    after the write into a copy) must survive the recompute reference's own verdict, or the
    writes-into-copies reference is taken for the program's meaning (review31)."""
    from codemod.runtime.script import Script, run_script

    (tmp_path / "views.py").write_text(VIEW_THEN_READ)
    script = Script(path="views.py", args=(), cwd=str(tmp_path))
    alone = run_script(script, mode="record", seed=True, view_copies=True, timeout=120)
    assert alone.unfit, "the case must be one the copies do not fit"
    both = run_script(script, mode="record", seed=True, view_copies=True, recompute=True, timeout=120)
    assert both.unfit == alone.unfit


def test_the_replay_refuses_what_it_cannot_run_again():
    """``RecomputeAfterStep`` says it does not fit (no reference, so ``unproven``), rather than
    replaying on values the forward did not read: a tensor of the forward changed in place after
    the stale call read it, and an in-place write into a tensor the fresh forward does not make
    (review31: these branches had no test)."""
    import torch.nn as nn

    def changed_after_read():
        torch.manual_seed(0)
        G, D = nn.Linear(3, 4), nn.Linear(4, 1)
        opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
        h = G(torch.randn(2, 3))
        loss = D(h).sum()
        D(h.detach()).sum().backward()
        opt_D.step()
        with torch.no_grad():
            h.mul_(0)
        loss.backward()

    def written_outside():
        torch.manual_seed(0)
        D = nn.Linear(4, 1)
        opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
        acc = torch.zeros(2, 1)
        x = torch.randn(2, 4, requires_grad=True)
        out = D(x)
        acc.add_(out.detach())
        loss = (out * acc).sum()
        D(x.detach()).sum().backward()
        opt_D.step()
        loss.backward()

    for program, why in ((changed_after_read, "changed in place after the call"),
                         (written_outside, "wrote in place into a tensor the fresh forward does not make")):
        with RecomputeAfterStep() as replay, pytest.raises(RuntimeError, match="modified by an inplace"):
            program()
        assert replay.unfit is not None and why in replay.unfit, (program.__name__, replay.unfit)
        assert not replay.replays
