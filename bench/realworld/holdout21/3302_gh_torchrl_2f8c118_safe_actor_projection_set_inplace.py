# source: https://github.com/pytorch/rl/commit/2f8c118e3da4fcf484c6c8b85d26d55ffd518615
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# TorchRL (pytorch/rl) PR #2755: a policy built from a SafeProbabilisticModule with safe=True (here a Normal
# actor with a Bounded(-1, 1) action spec, trained against a frozen critic as in DDPG / SAC actor losses). The
# module's forward hook `_forward_hook_safe_action` (common.py) projects a sample that is out of the spec's
# bounds, `Bounded._project` -> `torch.maximum(torch.minimum(val, high), low)` (minimum saves the sample), and
# writes the projection back into the sample itself, `tensordict_out.set_(_key, _spec.project(...))` (TensorDict's
# `set_` copies into the stored tensor in place). The actor loss's backward then raises "one of the variables
# needed for gradient computation has been modified by an inplace operation". Commit 2f8c118e3 ("Fix safe
# probabilistic backward by removing in-place modif", the maintainer's ghstack PR) binds the projection with
# `tensordict_out.set(_key, _spec.project(item))` and makes `Bounded._project` `torch.clamp(val, low, high)`.
# The library modules are 3302helpers_torchrl_probabilistic.py and 3302helpers_torchrl_specs.py (ref: _fixed);
# 3302helpers_torchrl_tensordict.py stands in for the tensordict package (not installed here; its header says
# how `set` / `set_` behave). Stand-ins here: a 4-d observation batch, a two-layer policy and a frozen critic,
# one Adam step; returned: the loss, the (projected) actions, policy gradients and a weight after the step.
import importlib
import os
import sys

import torch
from torch import nn
from torch.distributions import Normal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tdm = importlib.import_module("3302helpers_torchrl_tensordict")
specs = importlib.import_module("3302helpers_torchrl_specs")
probabilistic = importlib.import_module("3302helpers_torchrl_probabilistic")


class NormalParamExtractor(nn.Module):
    def forward(self, x):
        loc, scale = x.chunk(2, -1)
        return loc, nn.functional.softplus(scale) + 1e-4


def compute():
    torch.manual_seed(0)
    obs_dim, act_dim = 4, 2
    policy_net = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 2 * act_dim), NormalParamExtractor())
    action_spec = specs.Bounded(low=-1.0, high=1.0, shape=(act_dim,))
    actor = tdm.TensorDictSequential(
        tdm.TensorDictModule(policy_net, in_keys=["observation"], out_keys=["loc", "scale"]),
        probabilistic.SafeProbabilisticModule(
            in_keys=["loc", "scale"], out_keys=["action"], spec=action_spec, safe=True, distribution_class=Normal,
        ),
    )
    critic = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.Tanh(), nn.Linear(32, 1))
    for p in critic.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.Adam(policy_net.parameters(), lr=1e-3)

    probabilistic.set_interaction_type("random")
    td = tdm.TensorDict({"observation": torch.randn(16, obs_dim)}, batch_size=[16])
    td = actor(td)
    action = td.get("action")
    q_value = critic(torch.cat([td.get("observation"), action], -1))
    loss_actor = -q_value.mean()
    optimizer.zero_grad()
    loss_actor.backward()
    out = {
        "loss_actor": loss_actor.detach(),
        "action": action.detach().clone(),
        "policy.0.weight.grad": policy_net[0].weight.grad.clone(),
        "policy.2.weight.grad": policy_net[2].weight.grad.clone(),
        "policy.2.bias.grad": policy_net[2].bias.grad.clone(),
    }
    optimizer.step()
    out["policy.2.weight.after_step"] = policy_net[2].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
