# source: https://github.com/pranz24/pytorch-soft-actor-critic/commit/e961172767b9452dffe1b6166f389c0395711a85
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# pytorch-soft-actor-critic (pranz24), sac.py, SAC.update_parameters: the critic losses and the policy loss (through
# `self.critic(state_batch, pi)`) are all built first; then `qf1_loss.backward(); self.critic_optim.step()`,
# `qf2_loss.backward(); self.critic_optim.step()` and only then `policy_loss.backward()`, whose graph saved the critic
# weights that the Adam steps have just modified in place; since PyTorch 1.5 the policy backward fails. Commits
# e961172 / a1e8d73 "fix for pytorch-1.5": one critic step on `qf_loss = qf1_loss + qf2_loss`, then the critic's
# parameters are frozen (`requires_grad = False`), the policy loss is computed through the updated critic and stepped,
# and the critic is unfrozen. The fix reorders the update (the policy now sees the stepped critic, the two critic
# steps become one), hence `differs`; not a local rewrite.
# Stand-ins: model.py's QNetwork / GaussianPolicy are copied below (hidden 16, state 3, action 2, no action_space so
# scale 1 and bias 0); a fixed batch of 8 transitions replaces the replay memory; alpha 0.2, no entropy tuning; three
# updates on that batch; compute() returns the parameters after them.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal
from torch.optim import Adam

LOG_SIG_MAX = 2
LOG_SIG_MIN = -20
epsilon = 1e-6


def weights_init_(m):
    if isinstance(m, nn.Linear):
        torch.nn.init.xavier_uniform_(m.weight, gain=1)
        torch.nn.init.constant_(m.bias, 0)


class QNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super(QNetwork, self).__init__()
        self.linear1 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.linear3 = nn.Linear(hidden_dim, 1)
        self.linear4 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear5 = nn.Linear(hidden_dim, hidden_dim)
        self.linear6 = nn.Linear(hidden_dim, 1)
        self.apply(weights_init_)

    def forward(self, state, action):
        xu = torch.cat([state, action], 1)
        x1 = F.relu(self.linear1(xu))
        x1 = F.relu(self.linear2(x1))
        x1 = self.linear3(x1)
        x2 = F.relu(self.linear4(xu))
        x2 = F.relu(self.linear5(x2))
        x2 = self.linear6(x2)
        return x1, x2


class GaussianPolicy(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super(GaussianPolicy, self).__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.mean_linear = nn.Linear(hidden_dim, num_actions)
        self.log_std_linear = nn.Linear(hidden_dim, num_actions)
        self.apply(weights_init_)
        self.action_scale = torch.tensor(1.)
        self.action_bias = torch.tensor(0.)

    def forward(self, state):
        x = F.relu(self.linear1(state))
        x = F.relu(self.linear2(x))
        mean = self.mean_linear(x)
        log_std = self.log_std_linear(x)
        log_std = torch.clamp(log_std, min=LOG_SIG_MIN, max=LOG_SIG_MAX)
        return mean, log_std

    def sample(self, state):
        mean, log_std = self.forward(state)
        std = log_std.exp()
        normal = Normal(mean, std)
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + epsilon)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean


class SAC(object):
    def __init__(self, num_inputs, num_actions, hidden_size=16, lr=3e-4):
        self.gamma = 0.99
        self.alpha = 0.2
        self.critic = QNetwork(num_inputs, num_actions, hidden_size)
        self.critic_optim = Adam(self.critic.parameters(), lr=lr)
        self.critic_target = copy.deepcopy(self.critic)
        self.policy = GaussianPolicy(num_inputs, num_actions, hidden_size)
        self.policy_optim = Adam(self.policy.parameters(), lr=lr)

    def update_parameters(self, state_batch, action_batch, reward_batch, next_state_batch, mask_batch):
        with torch.no_grad():
            next_state_action, next_state_log_pi, _ = self.policy.sample(next_state_batch)
            qf1_next_target, qf2_next_target = self.critic_target(next_state_batch, next_state_action)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - self.alpha * next_state_log_pi
            next_q_value = reward_batch + mask_batch * self.gamma * (min_qf_next_target)
        qf1, qf2 = self.critic(state_batch, action_batch)
        qf1_loss = F.mse_loss(qf1, next_q_value)
        qf2_loss = F.mse_loss(qf2, next_q_value)

        pi, log_pi, _ = self.policy.sample(state_batch)

        qf1_pi, qf2_pi = self.critic(state_batch, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)

        policy_loss = ((self.alpha * log_pi) - min_qf_pi).mean()

        self.critic_optim.zero_grad()
        qf1_loss.backward()
        self.critic_optim.step()

        self.critic_optim.zero_grad()
        qf2_loss.backward()
        self.critic_optim.step()

        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()

        return qf1_loss.item(), qf2_loss.item(), policy_loss.item()


def compute():
    torch.manual_seed(0)
    agent = SAC(3, 2)
    state = torch.randn(8, 3)
    action = torch.rand(8, 2) * 2 - 1
    reward = torch.randn(8, 1)
    next_state = torch.randn(8, 3)
    mask = torch.ones(8, 1)
    for _ in range(3):  # the training loop calls update_parameters every step
        agent.update_parameters(state, action, reward, next_state, mask)
    out = {"policy." + n: p.detach().clone() for n, p in agent.policy.named_parameters()}
    out.update({"critic." + n: p.detach().clone() for n, p in agent.critic.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
