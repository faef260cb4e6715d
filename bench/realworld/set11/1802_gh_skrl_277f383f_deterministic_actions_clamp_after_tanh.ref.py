# reference fix for 1802: commit 277f383f in the library module (1802helpers_skrl_models_fixed.py):
# `actions = torch.clamp(actions, min=..., max=...)` out of place.
import copy
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
models = importlib.import_module("1802helpers_skrl_models_fixed")


class Policy(models.DeterministicModel):
    def __init__(self, observation_space, action_space, device):
        super().__init__(observation_space, action_space, device)
        self.net = torch.nn.Sequential(torch.nn.Linear(self.num_observations, 32), torch.nn.ReLU(),
                                       torch.nn.Linear(32, self.num_actions), torch.nn.Tanh())

    def compute(self, states, taken_actions):
        return self.net(states)


class Critic(models.DeterministicModel):
    def __init__(self, observation_space, action_space, device):
        super().__init__(observation_space, action_space, device)
        self.net = torch.nn.Sequential(torch.nn.Linear(self.num_observations + self.num_actions, 32), torch.nn.ReLU(),
                                       torch.nn.Linear(32, 1))

    def compute(self, states, taken_actions):
        return self.net(torch.cat([states, taken_actions], dim=1))


def compute():
    torch.manual_seed(0)
    observation_space = models.gym.Box(-8.0, 8.0, (3,))
    action_space = models.gym.Box(-2.0, 2.0, (1,))
    policy = Policy(observation_space, action_space, "cpu")
    critic = Critic(observation_space, action_space, "cpu")
    target_policy = copy.deepcopy(policy)
    target_critic = copy.deepcopy(critic)
    optimizer_policy = torch.optim.SGD(policy.parameters(), lr=1e-2)
    optimizer_critic = torch.optim.SGD(critic.parameters(), lr=1e-2)

    batch = 16
    sampled_states = torch.randn(batch, 3)
    sampled_actions = torch.rand(batch, 1) * 4 - 2
    sampled_rewards = torch.randn(batch, 1)
    sampled_next_states = torch.randn(batch, 3)
    sampled_dones = torch.zeros(batch, 1)

    with torch.no_grad():
        next_actions, _, _ = target_policy.act(states=sampled_next_states)
        target_values, _, _ = target_critic.act(states=sampled_next_states, taken_actions=next_actions)
        target_values = sampled_rewards + 0.99 * (1 - sampled_dones) * target_values

    critic_values, _, _ = critic.act(states=sampled_states, taken_actions=sampled_actions)
    loss_critic = F.mse_loss(critic_values, target_values)
    optimizer_critic.zero_grad()
    loss_critic.backward()
    optimizer_critic.step()

    actions, _, _ = policy.act(states=sampled_states)
    critic_values, _, _ = critic.act(states=sampled_states, taken_actions=actions)
    loss_policy = -critic_values.mean()
    optimizer_policy.zero_grad()
    loss_policy.backward()
    out = {"policy.%s.grad" % k: p.grad for k, p in policy.named_parameters()}
    optimizer_policy.step()
    out.update({"policy.%s" % k: p.detach().clone() for k, p in policy.named_parameters()})
    out.update({"critic.%s" % k: p.detach().clone() for k, p in critic.named_parameters()})
    out["actions"] = actions.detach()
    return out


if __name__ == "__main__":
    compute()
