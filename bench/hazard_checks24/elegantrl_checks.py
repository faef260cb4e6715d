"""elegantrl 0.3.6 (sdist): the one proven finding of `inplacefix check` on main e3574f0 (stop 49,
prec49): `AgentVMPO.calc_pi_loss_not_use_topk` (agents/AgentVMPO.py:124) writes
`nn.functional.softmax(advs_detached / eta_detached, dim=0).squeeze_()`; softmax saves its result and
`squeeze_` bumps its version. The module imports a top-level `util` that the package does not ship
(only for `@util.timeit()` on `update`), so as installed it does not import: the driver puts an
identity-decorator stand-in for `util` in sys.modules and builds a real AgentVMPO (small sizes, CPU).
The path calls the method (the one `calc_pi_loss` is bound to with use_topk=False) with advantages
requiring grad (the critic's values minus returns, not under no_grad) and runs backward; the control
the same with `.squeeze()` (out of place, one line); the context what `AgentVMPO.update` does: the
advantages computed under `torch.no_grad()` (and eta detached), so softmax's output requires no grad
and backward through the policy loss runs.
Real by this file's convention (an input requiring grad raises); the library's own use runs."""

import _shim  # noqa: F401
import sys
import types

util = types.ModuleType("util")  # not shipped by elegantrl 0.3.6; AgentVMPO uses only util.timeit()
util.timeit = lambda *a, **k: (lambda f: f)
sys.modules.setdefault("util", util)

import torch  # noqa: E402
from _check import attempt, expect_line  # noqa: E402
from _rewrite import rewritten, replaced  # noqa: E402
from elegantrl.agents import AgentVMPO as M  # noqa: E402

function = M.AgentVMPO.calc_pi_loss_not_use_topk
expect_line(function, 124, "psi_detached = nn.functional.softmax(advs_detached / eta_detached, dim=0).squeeze_()")
FINDING = "elegantrl/agents/AgentVMPO.py:124:IPF103"


def scenario(advs_with_grad):
    def run():
        torch.manual_seed(0)
        agent = M.AgentVMPO(state_dim=4, action_dim=2, mid_dim=8, device="cpu", epsilon_of_eta=0.01)
        states, actions, returns = torch.randn(16, 4), torch.randn(16, 2), torch.randn(16)
        if advs_with_grad:
            advs = agent.critic(states).squeeze() - returns
        else:
            with torch.no_grad():  # as AgentVMPO.update computes vals and advs
                advs = agent.critic(states).squeeze() - returns
                advs = (advs - advs.mean()) / (advs.std() + 1e-7)
        mean, cov = agent.actor.get_mean(states), agent.actor.get_cov()
        loss = agent.calc_pi_loss(mean, cov, actions, advs) + agent.calc_eta_loss(advs)
        loss.backward()
        assert agent.actor.action_log_std.grad is not None
    return run


attempt(FINDING, "path", "calc_pi_loss (use_topk=False) with advantages requiring grad (critic - returns), backward",
        scenario(True))
with replaced(M.AgentVMPO, "calc_pi_loss_not_use_topk", rewritten(function, [
        ("dim=0).squeeze_() ", "dim=0).squeeze() ")])):
    attempt(FINDING, "control", "line 124 with .squeeze() (out of place)", scenario(True))
attempt(FINDING, "context", "AgentVMPO.update's use: advantages computed under no_grad, eta detached, backward",
        scenario(False))
