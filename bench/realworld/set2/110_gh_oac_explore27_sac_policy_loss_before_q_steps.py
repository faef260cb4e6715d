# source: https://github.com/microsoft/oac-explore/issues/27
# pattern: other
# codemod_fixable: no
# error: A
# ref_semantics: differs
# SAC trainer (rlkit-style): policy_loss is built from qf1/qf2(obs, new_obs_actions) early in the step, then the
# Q-function optimizers step (updating qf1/qf2 weights in place), and only afterwards policy_loss.backward() runs
# through the stale Q-network graph. Fix from the thread: compute q_new_actions/policy_loss after the Q updates.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class FlattenMlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_sizes=(16, 16)):
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
    def __init__(self, obs_dim, action_dim, hidden=16):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.last_fc = nn.Linear(hidden, action_dim)
        self.last_fc_log_std = nn.Linear(hidden, action_dim)

    def forward(self, obs, reparameterize=True, return_log_prob=True):
        h = self.trunk(obs)
        mean = self.last_fc(h)
        log_std = torch.clamp(self.last_fc_log_std(h), -20, 2)
        std = torch.exp(log_std)
        normal = Normal(mean, std)
        pre_tanh_value = normal.rsample()
        action = torch.tanh(pre_tanh_value)
        log_prob = normal.log_prob(pre_tanh_value) - torch.log(1 - action * action + 1e-6)
        log_prob = log_prob.sum(dim=1, keepdim=True)
        return action, mean, log_std, log_prob


class SACTrainer:
    def __init__(self, policy, qf1, qf2, target_qf1, target_qf2, action_dim, discount=0.99, reward_scale=1.0,
                 policy_lr=3e-4, qf_lr=3e-4):
        self.policy, self.qf1, self.qf2 = policy, qf1, qf2
        self.target_qf1, self.target_qf2 = target_qf1, target_qf2
        self.target_entropy = -float(action_dim)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=policy_lr)
        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=policy_lr)
        self.qf1_optimizer = torch.optim.Adam(self.qf1.parameters(), lr=qf_lr)
        self.qf2_optimizer = torch.optim.Adam(self.qf2.parameters(), lr=qf_lr)
        self.discount, self.reward_scale = discount, reward_scale

    def train_from_torch(self, batch):
        rewards = batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        """
        Policy and Alpha Loss
        """
        new_obs_actions, policy_mean, policy_log_std, log_pi = self.policy(
            obs, reparameterize=True, return_log_prob=True)
        alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.alpha_optimizer.step()
        alpha = self.log_alpha.exp()

        q_new_actions = torch.min(
            self.qf1(obs, new_obs_actions),
            self.qf2(obs, new_obs_actions),
        )
        policy_loss = (alpha * log_pi - q_new_actions).mean()

        """
        QF Loss
        """
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, _, _, new_log_pi = self.policy(next_obs, reparameterize=True, return_log_prob=True)
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
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward(retain_graph=True)
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward(retain_graph=True)
        self.qf2_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        grads = {'policy.' + n: p.grad.clone() for n, p in self.policy.named_parameters()}
        self.policy_optimizer.step()
        return grads


def compute():
    torch.manual_seed(0)
    obs_dim, action_dim, n = 4, 2, 8
    policy = TanhGaussianPolicy(obs_dim, action_dim)
    qf1, qf2 = FlattenMlp(obs_dim + action_dim, 1), FlattenMlp(obs_dim + action_dim, 1)
    target_qf1, target_qf2 = FlattenMlp(obs_dim + action_dim, 1), FlattenMlp(obs_dim + action_dim, 1)
    target_qf1.load_state_dict(qf1.state_dict())
    target_qf2.load_state_dict(qf2.state_dict())
    trainer = SACTrainer(policy, qf1, qf2, target_qf1, target_qf2, action_dim)
    batch = {
        'rewards': torch.randn(n, 1),
        'terminals': torch.zeros(n, 1),
        'observations': torch.randn(n, obs_dim),
        'actions': torch.rand(n, action_dim) * 2 - 1,
        'next_observations': torch.randn(n, obs_dim),
    }
    return trainer.train_from_torch(batch)


if __name__ == "__main__":
    compute()
