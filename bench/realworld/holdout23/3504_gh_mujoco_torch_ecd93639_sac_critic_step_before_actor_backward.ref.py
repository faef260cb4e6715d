# reference fix for 3504: mujoco-torch commit ecd93639 in the training loop: zero the three optimizers, one
# backward of loss_qvalue + loss_actor + loss_alpha, clip the critic gradients, then step critic, actor and alpha.
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

    # Zero all grads
    critic_optim.zero_grad()
    actor_optim.zero_grad()
    alpha_optim.zero_grad()

    # Single combined backward
    total_loss = loss_vals["loss_qvalue"] + loss_vals["loss_actor"] + loss_vals["loss_alpha"]
    total_loss.backward()

    # Clip critic grads
    nn.utils.clip_grad_norm_(list(loss_module.qvalue_network_params.values()), 1.0)

    # Step all optimizers
    critic_optim.step()
    actor_optim.step()
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
