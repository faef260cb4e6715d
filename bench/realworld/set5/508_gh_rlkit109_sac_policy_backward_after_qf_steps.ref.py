# reference fix for 508 (the merged rlkit PR #109): optimize the policy before the two Q functions.
import importlib.util
import os

import torch
import torch.optim as optim
from torch import nn as nn
from torch.distributions import Normal

_spec = importlib.util.spec_from_file_location(
    "pytorch_util", os.path.join(os.path.dirname(os.path.abspath(__file__)), "508helpers_pytorch_util.py"))
ptu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ptu)


class FlattenMlp(nn.Module):
    def __init__(self, hidden_sizes, output_size, input_size):
        super().__init__()
        layers, in_size = [], input_size
        for h in hidden_sizes:
            layers += [nn.Linear(in_size, h), nn.ReLU()]
            in_size = h
        layers.append(nn.Linear(in_size, output_size))
        self.net = nn.Sequential(*layers)

    def forward(self, *inputs):
        return self.net(torch.cat(inputs, dim=1))


class TanhGaussianPolicy(nn.Module):
    def __init__(self, hidden_sizes, obs_dim, action_dim):
        super().__init__()
        layers, in_size = [], obs_dim
        for h in hidden_sizes:
            layers += [nn.Linear(in_size, h), nn.ReLU()]
            in_size = h
        self.trunk = nn.Sequential(*layers)
        self.last_fc = nn.Linear(in_size, action_dim)
        self.last_fc_log_std = nn.Linear(in_size, action_dim)

    def forward(self, obs, reparameterize=True, return_log_prob=False):
        h = self.trunk(obs)
        mean = self.last_fc(h)
        log_std = torch.clamp(self.last_fc_log_std(h), -20, 2)
        std = torch.exp(log_std)
        normal = Normal(mean, std)
        pre_tanh_value = normal.rsample()
        action = torch.tanh(pre_tanh_value)
        log_prob = normal.log_prob(pre_tanh_value) - torch.log(1 - action * action + 1e-6)
        log_prob = log_prob.sum(dim=1, keepdim=True)
        return action, mean, log_std, log_prob, std, pre_tanh_value


class SACTrainer:
    def __init__(
            self,
            action_dim,
            policy,
            qf1,
            qf2,
            target_qf1,
            target_qf2,

            discount=0.99,
            reward_scale=1.0,

            policy_lr=1e-3,
            qf_lr=1e-3,
            optimizer_class=optim.Adam,

            soft_target_tau=1e-2,
            target_update_period=1,

            use_automatic_entropy_tuning=True,
            target_entropy=None,
    ):
        super().__init__()
        self.policy = policy
        self.qf1 = qf1
        self.qf2 = qf2
        self.target_qf1 = target_qf1
        self.target_qf2 = target_qf2
        self.soft_target_tau = soft_target_tau
        self.target_update_period = target_update_period

        self.use_automatic_entropy_tuning = use_automatic_entropy_tuning
        if self.use_automatic_entropy_tuning:
            if target_entropy:
                self.target_entropy = target_entropy
            else:
                self.target_entropy = -float(action_dim)  # heuristic value from Tuomas
            self.log_alpha = ptu.zeros(1, requires_grad=True)
            self.alpha_optimizer = optimizer_class(
                [self.log_alpha],
                lr=policy_lr,
            )

        self.qf_criterion = nn.MSELoss()
        self.vf_criterion = nn.MSELoss()

        self.policy_optimizer = optimizer_class(
            self.policy.parameters(),
            lr=policy_lr,
        )
        self.qf1_optimizer = optimizer_class(
            self.qf1.parameters(),
            lr=qf_lr,
        )
        self.qf2_optimizer = optimizer_class(
            self.qf2.parameters(),
            lr=qf_lr,
        )

        self.discount = discount
        self.reward_scale = reward_scale
        self._n_train_steps_total = 0

    def train_from_torch(self, batch):
        rewards = batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        """
        Policy and Alpha Loss
        """
        new_obs_actions, policy_mean, policy_log_std, log_pi, *_ = self.policy(
            obs, reparameterize=True, return_log_prob=True,
        )
        if self.use_automatic_entropy_tuning:
            alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
            self.alpha_optimizer.zero_grad()
            alpha_loss.backward()
            self.alpha_optimizer.step()
            alpha = self.log_alpha.exp()
        else:
            alpha_loss = 0
            alpha = 1

        q_new_actions = torch.min(
            self.qf1(obs, new_obs_actions),
            self.qf2(obs, new_obs_actions),
        )
        policy_loss = (alpha*log_pi - q_new_actions).mean()

        """
        QF Loss
        """
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        # Make sure policy accounts for squashing functions like tanh correctly!
        new_next_actions, _, _, new_log_pi, *_ = self.policy(
            next_obs, reparameterize=True, return_log_prob=True,
        )
        target_q_values = torch.min(
            self.target_qf1(next_obs, new_next_actions),
            self.target_qf2(next_obs, new_next_actions),
        ) - alpha * new_log_pi

        q_target = self.reward_scale * rewards + (1. - terminals) * self.discount * target_q_values
        qf1_loss = self.qf_criterion(q1_pred, q_target.detach())
        qf2_loss = self.qf_criterion(q2_pred, q_target.detach())

        """
        Update networks
        """
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        """
        Soft Updates
        """
        if self._n_train_steps_total % self.target_update_period == 0:
            ptu.soft_update_from_to(
                self.qf1, self.target_qf1, self.soft_target_tau
            )
            ptu.soft_update_from_to(
                self.qf2, self.target_qf2, self.soft_target_tau
            )
        self._n_train_steps_total += 1


def compute():
    torch.manual_seed(0)
    obs_dim, action_dim, n, M = 4, 2, 8, 16
    qf1 = FlattenMlp(input_size=obs_dim + action_dim, output_size=1, hidden_sizes=[M, M])
    qf2 = FlattenMlp(input_size=obs_dim + action_dim, output_size=1, hidden_sizes=[M, M])
    target_qf1 = FlattenMlp(input_size=obs_dim + action_dim, output_size=1, hidden_sizes=[M, M])
    target_qf2 = FlattenMlp(input_size=obs_dim + action_dim, output_size=1, hidden_sizes=[M, M])
    policy = TanhGaussianPolicy(obs_dim=obs_dim, action_dim=action_dim, hidden_sizes=[M, M])
    trainer = SACTrainer(action_dim, policy, qf1, qf2, target_qf1, target_qf2, policy_lr=3e-4, qf_lr=3e-4)
    out = {}
    for step in range(2):
        batch = {
            'rewards': torch.randn(n, 1),
            'terminals': torch.zeros(n, 1),
            'observations': torch.randn(n, obs_dim),
            'actions': torch.rand(n, action_dim) * 2 - 1,
            'next_observations': torch.randn(n, obs_dim),
        }
        trainer.train_from_torch(batch)
        out.update({"step%d.policy.%s" % (step, k): p.grad.clone() for k, p in policy.named_parameters()})
        out.update({"step%d.qf1.%s" % (step, k): p.grad.clone() for k, p in qf1.named_parameters()})
    out.update({"final.policy." + k: p.detach().clone() for k, p in policy.named_parameters()})
    out.update({"final.qf1." + k: p.detach().clone() for k, p in qf1.named_parameters()})
    out.update({"final.target_qf2." + k: p.detach().clone() for k, p in target_qf2.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
