# source: https://github.com/vmoens/mujoco-torch/commit/ecd936397e7fb93f9f1ef952dd184f295cfb7fc1
# pattern: optimizer_step
# codemod_fixable: no
# error: A
# ref_semantics: same
# mujoco-torch (vmoens/mujoco-torch), commit ecd93639 "Fix SAC: single combined backward pass to avoid inplace
# modification" (examples/train_sac.py). The SAC example computes all three losses with one call of torchrl's
# SACLoss, then updates the critic (`loss_qvalue.backward(retain_graph=True)`, grad clipping,
# `critic_optim.step()`) before the actor (`loss_actor.backward(retain_graph=True)`, `actor_optim.step()`) and alpha.
# SACLoss runs the actor loss through the Q networks with `qvalue_network_params.detach()`, which share their
# version counter with the trained parameters; Adam's in-place update of those parameters in critic_optim.step()
# invalidates the weights the actor loss's Q forward saved, so the actor backward fails ("... is at version 1;
# expected version 0"). Not a local rewrite: the fix zeroes the three optimizers, sums the three losses into one
# backward, then clips the critic gradients and steps all three optimizers. ref_semantics same: the actor loss
# reaches the Q networks only through detached parameters and the Q target is computed without grad, so each
# optimizer sees the same gradients as the original order would have given with the pre-step Q weights.
# The parent commit (9fa9f065, "Fix SAC inplace operation error with retain_graph=True") is the failing program.
# Library module: 3504helpers_torchrl_sac_loss.py, a stand-in for torchrl's SACLoss (see its header). Stand-ins
# here: make_actor / make_qvalue at small width (the source's MLPs are 256 wide), a fixed random replay batch in
# place of the MuJoCo environment, collector and replay buffer, and one update (utd_ratio 1) without the target
# soft update that follows it.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sac = importlib.import_module("3504helpers_torchrl_sac_loss")


class QValueMLP(nn.Module):
    """Q-network that concatenates observation and action."""

    def __init__(self, obs_dim, act_dim, hidden_dim=16):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(obs_dim + act_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, hidden_dim),
                                 nn.ReLU(), nn.Linear(hidden_dim, 1))

    def forward(self, obs, action):
        return self.mlp(torch.cat([obs, action], -1))


def compute():
    torch.manual_seed(0)
    obs_dim, act_dim, batch_size = 5, 2, 8
    actor = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2 * act_dim))
    qvalue = QValueMLP(obs_dim, act_dim)
    loss_module = sac.SACLoss(actor_network=actor, qvalue_network=qvalue, num_qvalue_nets=2,
                              target_entropy=-float(act_dim))
    actor_optim = torch.optim.Adam(list(loss_module.actor_network.parameters()), lr=1e-3)
    critic_optim = torch.optim.Adam(list(loss_module.qvalue_network_params.values()), lr=1e-3)
    alpha_optim = torch.optim.Adam([loss_module.log_alpha], lr=1e-3)
    batch = (torch.randn(batch_size, obs_dim), torch.rand(batch_size, act_dim) * 2 - 1, torch.randn(batch_size, 1),
             torch.randn(batch_size, obs_dim), torch.zeros(batch_size, 1))

    loss_vals = loss_module(batch)

    # Critic update
    critic_optim.zero_grad()
    loss_vals["loss_qvalue"].backward(retain_graph=True)
    nn.utils.clip_grad_norm_(list(loss_module.qvalue_network_params.values()), 1.0)
    critic_optim.step()

    # Actor update
    actor_optim.zero_grad()
    loss_vals["loss_actor"].backward(retain_graph=True)
    actor_optim.step()

    # Alpha update
    alpha_optim.zero_grad()
    loss_vals["loss_alpha"].backward()
    alpha_optim.step()

    out = {k: v.detach() for k, v in loss_vals.items()}
    for i, p in enumerate(loss_module.actor_network.parameters()):
        out["actor.after%d" % i] = p.detach().clone()
    for k, p in loss_module.qvalue_network_params.items():
        out["qvalue.after." + k] = p.detach().clone()
    out["log_alpha.after"] = loss_module.log_alpha.detach().clone()
    return out


if __name__ == "__main__":
    compute()
