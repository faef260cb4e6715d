# reference fix for 701: the fix from the issue, `log_stds.clamp(-20, 2)` (701helpers_network_fixed.py).
import os
import sys
from importlib import import_module

import torch
from torch import nn
from torch.optim import Adam

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
network = import_module("701helpers_network_fixed")


class SAC:

    def __init__(self, state_shape, action_shape, lr_actor=3e-4, lr_alpha=3e-4,
                 units_actor=(16, 16), units_critic=(16, 16)):
        self.actor = network.StateDependentPolicy(
            state_shape=state_shape,
            action_shape=action_shape,
            hidden_units=units_actor,
            hidden_activation=nn.ReLU(inplace=True)
        )
        self.critic = network.TwinnedStateActionFunction(
            state_shape=state_shape,
            action_shape=action_shape,
            hidden_units=units_critic,
            hidden_activation=nn.ReLU(inplace=True)
        )
        self.alpha = 1.0
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = -float(action_shape[0])
        self.optim_actor = Adam(self.actor.parameters(), lr=lr_actor)
        self.optim_alpha = torch.optim.Adam([self.log_alpha], lr=lr_alpha)

    def update_actor(self, states):
        actions, log_pis = self.actor.sample(states)
        qs1, qs2 = self.critic(states, actions)
        loss_actor = self.alpha * log_pis.mean() - torch.min(qs1, qs2).mean()

        self.optim_actor.zero_grad()
        loss_actor.backward(retain_graph=False)
        self.optim_actor.step()

        entropy = -log_pis.detach_().mean()
        loss_alpha = -self.log_alpha * (self.target_entropy - entropy)

        self.optim_alpha.zero_grad()
        loss_alpha.backward(retain_graph=False)
        self.optim_alpha.step()

        with torch.no_grad():
            self.alpha = self.log_alpha.exp().item()


def compute():
    torch.manual_seed(0)
    algo = SAC(state_shape=(5,), action_shape=(2,))
    states = torch.randn(8, 5)
    algo.update_actor(states)
    out = {"actor." + n: p.grad for n, p in algo.actor.named_parameters()}
    out.update({"actor_after." + n: p.detach().clone() for n, p in algo.actor.named_parameters()})
    out["log_alpha.grad"] = algo.log_alpha.grad
    out["log_alpha"] = algo.log_alpha.detach().clone()
    return out


if __name__ == "__main__":
    compute()
