# reference fix for 1901: commit 70290346 in the library module (1901helpers_tianshou_sac_fixed.py): the critics
# are updated from their own forwards first, the actor's loss is computed afterwards through the updated critics.
import importlib
import math
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sac = importlib.import_module("1901helpers_tianshou_sac_fixed")


class ActorProb(nn.Module):
    def __init__(self, layer_num, state_shape, action_shape,
                 max_action, device='cpu'):
        super().__init__()
        self.device = device
        self.model = [
            nn.Linear(math.prod(state_shape), 128),
            nn.ReLU(inplace=True)]
        for i in range(layer_num):
            self.model += [nn.Linear(128, 128), nn.ReLU(inplace=True)]
        self.model = nn.Sequential(*self.model)
        self.mu = nn.Linear(128, math.prod(action_shape))
        self.sigma = nn.Parameter(torch.zeros(math.prod(action_shape), 1))
        self._max = max_action

    def forward(self, s, **kwargs):
        if not isinstance(s, torch.Tensor):
            s = torch.tensor(s, device=self.device, dtype=torch.float)
        batch = s.shape[0]
        s = s.view(batch, -1)
        logits = self.model(s)
        mu = self.mu(logits)
        shape = [1] * len(mu.shape)
        shape[1] = -1
        sigma = (self.sigma.view(shape) + torch.zeros_like(mu)).exp()
        return (mu, sigma), None


class Critic(nn.Module):
    def __init__(self, layer_num, state_shape, action_shape=0, device='cpu'):
        super().__init__()
        self.device = device
        self.model = [
            nn.Linear(math.prod(state_shape) + math.prod(action_shape), 128),
            nn.ReLU(inplace=True)]
        for i in range(layer_num):
            self.model += [nn.Linear(128, 128), nn.ReLU(inplace=True)]
        self.model += [nn.Linear(128, 1)]
        self.model = nn.Sequential(*self.model)

    def forward(self, s, a=None):
        if not isinstance(s, torch.Tensor):
            s = torch.tensor(s, device=self.device, dtype=torch.float)
        if a is not None and not isinstance(a, torch.Tensor):
            a = torch.tensor(a, device=self.device, dtype=torch.float)
        batch = s.shape[0]
        s = s.view(batch, -1)
        if a is None:
            logits = self.model(s)
        else:
            a = a.view(batch, -1)
            logits = self.model(torch.cat([s, a], dim=1))
        return logits


def compute():
    torch.manual_seed(0)
    state_shape, action_shape, max_action = (3,), (1,), 2.0
    actor = ActorProb(1, state_shape, action_shape, max_action)
    actor_optim = torch.optim.Adam(actor.parameters(), lr=3e-4)
    critic1 = Critic(1, state_shape, action_shape)
    critic1_optim = torch.optim.Adam(critic1.parameters(), lr=1e-3)
    critic2 = Critic(1, state_shape, action_shape)
    critic2_optim = torch.optim.Adam(critic2.parameters(), lr=1e-3)
    policy = sac.SACPolicy(actor, actor_optim, critic1, critic1_optim, critic2, critic2_optim,
                           tau=0.005, gamma=0.99, alpha=0.2, action_range=[-max_action, max_action])
    n = 32
    batch = sac.Batch(obs=torch.randn(n, 3), act=torch.rand(n, 1) * 4 - 2, rew=torch.randn(n),
                      done=(torch.rand(n) < 0.1).float(), obs_next=torch.randn(n, 3), info={})
    losses = policy.learn(batch)
    out = {"actor.%s" % k: p.detach().clone() for k, p in actor.named_parameters()}
    out.update({"critic1.%s" % k: p.detach().clone() for k, p in critic1.named_parameters()})
    out.update({"critic2.%s" % k: p.detach().clone() for k, p in critic2.named_parameters()})
    out["critic1_loss"] = torch.tensor(losses["loss/critic1"])
    return out


if __name__ == "__main__":
    compute()
