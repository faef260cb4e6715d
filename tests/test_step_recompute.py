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
        weight = 0.1
        while weight < 0.25:
            loss_G = loss_G + weight * fake.abs().mean()
            weight += 0.1
        opt_D.zero_grad()
        loss_D.backward()
        opt_D.step()
        opt_G.zero_grad()
        loss_G.backward()
        opt_G.step()
        return {"w": G.weight.detach().clone()}
    ''')


def test_recompute_that_cannot_apply_says_why_and_writes_nothing(tmp_path):
    """Part of the loss is built in a ``while`` loop after D's call (a statement the rewrite does
    not run again: how often it runs may depend on what its first run changed): no recompute rewrite, the reason said, nothing written; the default meaning still
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


# A generator loss finished after D's step from a score taken before it (SRGAN's `g_loss =
# criterion(fake_out, ...)` after `optimizerD.step()`, FactorVAE's `D_tc_loss` from `D_z`, a
# VAE-GAN's `errVAE` from `recon_data`): the stale score is taken again right before the
# statement that finishes the loss, not before the backward.
LATE_LOSS = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def compute():
        torch.manual_seed(0)
        G = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 5))
        D = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
        opt_G = torch.optim.SGD(G.parameters(), lr=0.1)
        opt_D = torch.optim.Adam(D.parameters(), lr=0.01)
        out = {}
        for step in range(2):
            z = torch.randn(6, 3)
            real = torch.randn(6, 5)
            fake = G(z)
            score_fake = D(fake).mean()
            d_loss = D(fake.detach()).mean() - D(real).mean()
            opt_D.zero_grad()
            d_loss.backward()
            opt_D.step()
            logged = d_loss.item()
            g_loss = -score_fake + 0.1 * fake.pow(2).mean()
            opt_G.zero_grad()
            g_loss.backward()
            opt_G.step()
            out[f"g_loss{step}"] = g_loss.detach().clone()
            out[f"logged{step}"] = torch.tensor(logged)
        out.update({"G." + n: p.detach().clone() for n, p in G.named_parameters()})
        return out
    ''')


def test_recompute_takes_a_stale_score_again_before_the_loss_finished_after_the_step(tmp_path):
    """The loss is built after the step from a score taken through D before it: the score's
    statement runs again right before the loss's, verified against the replayed original, and
    equal to the reorder written by hand."""
    fixed, why = _recompute_text(LATE_LOSS, "opt_D.step()", "score_fake = D(fake)")
    assert fixed is not None, why
    assert ("        logged = d_loss.item()\n        # inplacefix (recompute)" in fixed
            and "        score_fake = D(fake).mean()\n        g_loss = -score_fake" in fixed), fixed
    assert fixed.count("fake = G(z)") == 1 and "retain_graph" not in fixed and "detach()).mean() -" in fixed
    path = tmp_path / "late.py"
    path.write_text(LATE_LOSS)
    result = repair(f"{path}::compute", meaning="recompute")
    assert result.verified, [(d.reference, d.reasons) for d in result.verification.devices]
    assert result.repaired == fixed
    by_hand = tmp_path / "late_by_hand.py"
    by_hand.write_text(LATE_LOSS.replace("        score_fake = D(fake).mean()\n", "", 1).replace(
        "        g_loss = -score_fake", "        score_fake = D(fake).mean()\n        g_loss = -score_fake"))
    repaired = tmp_path / "late_repaired.py"
    repaired.write_text(result.repaired)
    got, want = _load(repaired, "late_repaired").compute(), _load(by_hand, "late_by_hand").compute()
    assert set(got) == set(want)
    assert all(torch.allclose(got[k], want[k], rtol=1e-6, atol=1e-7) for k in want)


# The generator's loss finished by a loop and an `if` after D's call, its terms kept in a dict
# that is divided in place and filled after (DeOcclusion's cGAN step, a PPO clipped value loss).
LOOP_AND_IF = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def compute(clipped=True):
        torch.manual_seed(0)
        G = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 5))
        D = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
        opt_G = torch.optim.SGD(G.parameters(), lr=0.1)
        opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
        bce = nn.BCELoss()
        out = {}
        for step in range(2):
            z = torch.randn(6, 3)
            real = torch.rand(6, 5)
            fake = G(z)
            d_loss = bce(D(real), torch.ones(6, 1)) + bce(D(fake.detach()), torch.zeros(6, 1))
            g_loss = 0
            pred = D(fake)
            if clipped:
                adv = bce(pred.clamp(0.01, 0.99), torch.ones(6, 1))
            else:
                adv = bce(pred, torch.ones(6, 1))
            g_loss += adv
            terms = {"l1": (fake - real).abs().mean(), "l2": (fake - real).pow(2).mean()}
            for name in terms.keys():
                terms[name] /= 2
            for name, weight in (("l1", 1.0), ("l2", 0.5)):
                g_loss += weight * terms[name]
            terms["adv"] = adv
            opt_D.zero_grad()
            d_loss.backward()
            opt_D.step()
            opt_G.zero_grad()
            g_loss.backward()
            opt_G.step()
            out.update({f"{k}{step}": v.detach().clone() for k, v in terms.items()})
        out.update({"G." + n: p.detach().clone() for n, p in G.named_parameters()})
        return out
    ''')


def test_recompute_runs_a_loop_and_an_if_that_finish_the_loss_again(tmp_path):
    """Part of the loss is built in an ``if`` and a loop after D's call, and a dict of its terms
    is written in place and filled: all of it runs again (the dict filled again too, so the
    terms the program keeps are all there), verified, and equal to the reorder by hand."""
    fixed, why = _recompute_text(LOOP_AND_IF, "opt_D.step()", "pred = D(fake)")
    assert fixed is not None, why
    copied = ("g_loss = 0", "pred = D(fake)", "if clipped:", "g_loss += adv", "terms = {",
              "for name in terms.keys():", "for name, weight in", 'terms["adv"] = adv')
    assert all(fixed.count(text) == 2 for text in copied), fixed
    assert fixed.count("fake = G(z)") == 1 and fixed.count("d_loss = bce") == 1 and "retain_graph" not in fixed
    path = tmp_path / "loop.py"
    path.write_text(LOOP_AND_IF)
    result = repair(f"{path}::compute", meaning="recompute")
    assert result.verified, [(d.reference, d.reasons) for d in result.verification.devices]
    lines = LOOP_AND_IF.splitlines(keepends=True)
    first = next(i for i, t in enumerate(lines) if "g_loss = 0" in t)
    last = next(i for i, t in enumerate(lines) if 'terms["adv"] = adv' in t)
    block = lines[first:last + 1]
    rest = lines[:first] + lines[last + 1:]
    at = next(i for i, t in enumerate(rest) if "g_loss.backward()" in t)
    by_hand = tmp_path / "loop_by_hand.py"
    by_hand.write_text("".join(rest[:at] + block + rest[at:]))
    repaired = tmp_path / "loop_repaired.py"
    repaired.write_text(result.repaired)
    got, want = _load(repaired, "loop_repaired").compute(), _load(by_hand, "loop_by_hand").compute()
    assert set(got) == set(want) and "adv1" in got
    assert all(torch.allclose(got[k], want[k], rtol=1e-6, atol=1e-7) for k in want)


# Two backwards after D's step, the first one not through D (a smoothness term of G's output):
# the one that fails is the second (a CAAE's `di_loss_tot.backward()` after `dz_loss_tot`'s).
SECOND_BACKWARD = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def compute():
        torch.manual_seed(0)
        G = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 5))
        D = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
        opt_G = torch.optim.SGD(G.parameters(), lr=0.1)
        opt_D = torch.optim.SGD(D.parameters(), lr=0.1)
        z = torch.randn(6, 3)
        real = torch.randn(6, 5)
        fake = G(z)
        d_loss = D(fake.detach()).mean() - D(real).mean()
        smooth = (fake[1:] - fake[:-1]).pow(2).mean()
        g_loss = -D(fake).mean()
        opt_D.zero_grad()
        d_loss.backward()
        opt_D.step()
        opt_G.zero_grad()
        smooth.backward(retain_graph=True)
        g_loss.backward()
        opt_G.step()
        return {"G." + n: p.detach().clone() for n, p in G.named_parameters()}
    ''')


def test_recompute_rebuilds_the_loss_of_a_later_backward_than_the_first():
    """The first backward after the step does not go through D; the rewrite for the one after
    it is offered (the run does not say which backward failed: each one is a candidate)."""
    fixed, why = _recompute_text(SECOND_BACKWARD, "opt_D.step()", "g_loss = -D(fake)")
    assert fixed is not None, why
    assert ("    smooth.backward(retain_graph=True)\n    # inplacefix (recompute): the forward through the stepped "
            "module, run again after the step\n    g_loss = -D(fake).mean()\n    g_loss.backward()") in fixed, fixed
    assert fixed.count("smooth = (fake[1:]") == 1


def test_recompute_copy_may_bind_a_name_an_attribute_of_it_spells():
    """``entropy = dist.entropy().mean()`` reads `dist`, not a name `entropy` (the PPO loss of a
    medipixel report): running it again is no clash with what it binds."""
    source = textwrap.dedent('''\
        def update(actor, critic, critic_optim, actor_optim, state, ret):
            dist = actor(state)
            value = critic(state)
            entropy = dist.entropy().mean()
            total_loss = (ret - value).pow(2).mean() - 0.01 * entropy
            critic_optim.zero_grad()
            total_loss.backward(retain_graph=True)
            critic_optim.step()
            actor_optim.zero_grad()
            total_loss.backward()
            actor_optim.step()
        ''')
    fixed, why = _recompute_text(source, "critic_optim.step()", "value = critic(state)")
    assert fixed is not None, why
    assert ("    # inplacefix (recompute): the forward through the stepped module, run again after the step\n"
            "    value = critic(state)\n    entropy = dist.entropy().mean()\n    total_loss = (ret - value)") in fixed


# Two generators stepped one after the other, then each discriminator's loss built after the
# steps from a generator output taken before them (a CycleGAN loop). Both generators are one
# class: the run names both conflicts by the same step and the same line of `forward`, so fixing
# one loss looks to the repair as if the conflict stayed; the rewrite that rebuilds every loss
# the step made stale, at once, comes first (and copies shared with another plan go in once).
TWO_GENERATORS = textwrap.dedent('''\
    import itertools

    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, n_out):
            super().__init__()
            self.a, self.b = nn.Linear(4, 8), nn.Linear(8, n_out)

        def forward(self, x):
            return self.b(torch.tanh(self.a(x)))


    def compute():
        torch.manual_seed(0)
        G_x, G_y, D_x, D_y = Net(4), Net(4), Net(1), Net(1)
        opt_g = torch.optim.SGD(itertools.chain(G_x.parameters(), G_y.parameters()), lr=0.1)
        opt_d = torch.optim.SGD(itertools.chain(D_x.parameters(), D_y.parameters()), lr=0.1)
        real_x, real_y = torch.randn(6, 4), torch.randn(6, 4)
        opt_g.zero_grad()
        fake_y = G_x(real_x)
        loss_X = (D_x(fake_y) - 1).pow(2).mean() + (G_y(fake_y) - real_x).abs().mean()
        loss_X.backward(retain_graph=True)
        opt_g.step()
        opt_g.zero_grad()
        fake_x = G_y(real_y)
        loss_Y = (D_y(fake_x) - 1).pow(2).mean() + (G_x(fake_x) - real_y).abs().mean()
        loss_Y.backward(retain_graph=True)
        opt_g.step()
        opt_d.zero_grad()
        loss_D_x = D_x(real_y).pow(2).mean() + (D_x(fake_y) - 1).pow(2).mean()
        loss_D_x.backward()
        opt_d.step()
        opt_d.zero_grad()
        loss_D_y = D_y(real_x).pow(2).mean() + (D_y(fake_x) - 1).pow(2).mean()
        loss_D_y.backward()
        opt_d.step()
        out = {n: p.grad.clone() for n, p in itertools.chain(G_x.named_parameters(), G_y.named_parameters())}
        out.update({"D_y." + n: p.detach().clone() for n, p in D_y.named_parameters()})
        return out
    ''')


def test_recompute_rebuilds_every_loss_a_step_made_stale_at_once(tmp_path):
    path = tmp_path / "cycle.py"
    path.write_text(TWO_GENERATORS)
    result = repair(f"{path}::compute", meaning="recompute")
    assert result.verified, [s.action for s in result.steps]
    assert result.repaired.count("    fake_y = G_x(real_x)\n") == 2 and result.repaired.count("    fake_x = G_y(real_y)\n") == 2
    assert "    fake_y = G_x(real_x)\n    loss_D_x = " in result.repaired
    assert "    fake_x = G_y(real_y)\n    loss_D_y = " in result.repaired


def test_recompute_title_names_statements_not_their_comments():
    """A copied statement with a comment above it is named by its code in the title."""
    import libcst as cst

    from codemod.fixes.from_run import Positions
    from codemod.runtime import step_order

    source = LATE_LOSS.replace("        score_fake = D(fake).mean()\n",
                               "        # the score of the fakes\n        score_fake = D(fake).mean()\n")
    lines = source.splitlines()
    at = next(i for i, t in enumerate(lines, 1) if "opt_D.step()" in t)
    saved = next(i for i, t in enumerate(lines, 1) if "score_fake = D(fake)" in t)
    found, why = step_order.recompute_candidates(Positions(cst.MetadataWrapper(cst.parse_module(source))), at, True,
                                                 [saved])
    assert found, why
    assert "run `score_fake = D(fake).mean()` again" in found[0][1], found[0][1]


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


HELPER_BACKWARD = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def optimize(optimizer, loss):
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


    class Learner:
        def __init__(self):
            self.pi = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
            self.q = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
            self.pi_opt = torch.optim.SGD(self.pi.parameters(), lr=0.1)
            self.q_opt = torch.optim.SGD(self.q.parameters(), lr=0.1)

        def value_loss(self, s, a, r):
            return ((self.q(torch.cat([s, a], 1)) - r) ** 2).mean()

        def policy_loss(self, s):
            noisy = torch.tanh(self.pi(s) + 0.3 * torch.randn(s.shape[0], 2))
            return -self.q(torch.cat([s, noisy], 1)).mean(), noisy

        def update(self, s, a, r):
            v_loss = self.value_loss(s, a, r)
            p_loss, noisy = self.policy_loss(s)
            optimize(self.q_opt, v_loss)
            optimize(self.pi_opt, p_loss)
            return noisy


    def compute():
        torch.manual_seed(0)
        learner = Learner()
        out = {}
        for step in range(2):
            s, a, r = torch.randn(6, 3), torch.rand(6, 2), torch.randn(6, 1)
            out[f"noisy{step}"] = learner.update(s, a, r).detach().clone()
            out.update({f"pi{step}.{n}": p.grad.clone() for n, p in learner.pi.named_parameters()})
        out.update({"q." + n: p.detach().clone() for n, p in learner.q.named_parameters()})
        return out
    ''')


def test_recompute_moves_a_loss_whose_backward_runs_in_a_helper_after_the_step(tmp_path):
    """The backward and the step both run in a helper (``optimize(opt, loss)``), the policy's
    loss is built by a method that samples noise and calls the critic: the run's frames of the
    failing backward name the helper's call, the loss passed to it is built again after the
    critic's update; moved, not copied (a copy draws the noise again), as a maintainer would."""
    path = tmp_path / "helper.py"
    path.write_text(HELPER_BACKWARD)
    result = repair(f"{path}::compute", meaning="recompute")
    assert result.verified, [(d.reference, d.reasons) for d in result.verification.devices]
    assert all(d.reference == "recompute meaning" for d in result.verification.devices)
    moved = "        p_loss, noisy = self.policy_loss(s)\n"
    assert result.repaired.count(moved) == 1
    assert result.repaired.index("optimize(self.q_opt, v_loss)") < result.repaired.index(moved) \
        < result.repaired.index("optimize(self.pi_opt, p_loss)")
    assert "retain_graph" not in result.repaired and ".detach()" not in result.repaired.replace(
        "learner.update(s, a, r).detach()", "").replace("p.detach()", "")
    by_hand = tmp_path / "by_hand.py"
    by_hand.write_text(HELPER_BACKWARD.replace(moved, "").replace(
        "        optimize(self.pi_opt", moved + "        optimize(self.pi_opt"))
    repaired = tmp_path / "repaired.py"
    repaired.write_text(result.repaired)
    got, want = _load(repaired, "helper_repaired").compute(), _load(by_hand, "helper_by_hand").compute()
    assert set(got) == set(want)
    for key in want:
        assert torch.equal(got[key], want[key]), key


def test_the_replay_leaves_a_program_without_a_conflict_as_written():
    """A value taken off the stepped module's output without grad (``out.detach()``) and a frozen
    copy of its weights (a target network, ``load_state_dict``) feed a later loss whose graph
    saves none of the stepped weights: the program runs without error, so the recompute
    reference is the program as written (nothing is run again: no backward goes through them)."""
    torch.manual_seed(0)
    q, target = torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)
    alpha = torch.nn.Parameter(torch.ones(1))
    s = torch.randn(5, 3)

    def run():
        q.weight.data.fill_(0.5), q.bias.data.fill_(0.1)
        alpha.grad = None
        opt = torch.optim.SGD(q.parameters(), lr=0.5)
        target.load_state_dict(q.state_dict())
        target.requires_grad_(False)
        out = q(s)
        q_loss = (out - target(s)).pow(2).mean() + out.mean()
        entropy = out.detach()
        a_loss = (alpha * (entropy + target(s))).mean()
        opt.zero_grad()
        q_loss.backward()
        opt.step()
        a_loss.backward()
        return alpha.grad.clone()

    plain = run()
    with RecomputeAfterStep() as mode:
        replayed = run()
    assert mode.unfit is None and mode.replays == []
    assert torch.equal(plain, replayed)


CARRIED_OVER = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    def compute():
        torch.manual_seed(0)
        cell, head = nn.RNNCell(3, 4), nn.Linear(4, 1)
        opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
        h = torch.zeros(2, 4)
        for step in range(3):
            h = cell(torch.randn(2, 3), h)
            loss = head(h).pow(2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
        return {n: p.detach().clone() for n, p in cell.named_parameters()}
    ''')


def test_recompute_says_the_failing_backward_reuses_a_graph_of_an_earlier_iteration(tmp_path):
    """A hidden state carried into the next iteration with its graph (``retain_graph=True``):
    the backward that fails comes before the step in the loop's block. No recompute rewrite,
    and the reason names that backward's line and the shape (a graph of an earlier iteration),
    not only "no backward after the step"; nothing written."""
    path = tmp_path / "carried.py"
    path.write_text(CARRIED_OVER)
    done = subprocess.run([sys.executable, "-m", "codemod", "repair", f"{path.name}::compute", "--meaning",
                           "recompute", "--write"], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, (done.stdout, done.stderr)
    line = CARRIED_OVER.splitlines().index("        loss.backward(retain_graph=True)") + 1
    assert f"the backward that failed (line {line}) comes before `opt.step()`" in done.stdout, done.stdout
    assert "earlier iteration" in done.stdout
    assert path.read_text() == CARRIED_OVER
