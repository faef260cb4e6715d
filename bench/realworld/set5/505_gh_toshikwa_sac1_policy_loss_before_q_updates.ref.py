# reference fix for 505 (lknownothing in the issue, accepted by the author): calculate policy_loss after the
# Q1/Q2 updates.
import importlib.util
import os

import torch
import torch.nn as nn
from torch.distributions import Normal
from torch.optim import Adam

_spec = importlib.util.spec_from_file_location(
    "utils", os.path.join(os.path.dirname(os.path.abspath(__file__)), "505helpers_utils.py"))
utils = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(utils)
update_params, soft_update, hard_update, grad_false = \
    utils.update_params, utils.soft_update, utils.hard_update, utils.grad_false


def create_linear_network(input_dim, output_dim, hidden_units=[], initializer='xavier'):
    layers, units = [], input_dim
    for next_units in hidden_units:
        layers += [nn.Linear(units, next_units), nn.ReLU()]
        units = next_units
    layers.append(nn.Linear(units, output_dim))
    net = nn.Sequential(*layers)
    for m in net.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight, gain=1)
            nn.init.constant_(m.bias, 0)
    return net


class BaseNetwork(nn.Module):
    pass


class QNetwork(BaseNetwork):
    def __init__(self, num_inputs, num_actions, hidden_units=[256, 256],
                 initializer='xavier'):
        super(QNetwork, self).__init__()
        self.Q = create_linear_network(
            num_inputs+num_actions, 1, hidden_units=hidden_units,
            initializer=initializer)

    def forward(self, x):
        q = self.Q(x)
        return q


class TwinnedQNetwork(BaseNetwork):

    def __init__(self, num_inputs, num_actions, hidden_units=[256, 256],
                 initializer='xavier'):
        super(TwinnedQNetwork, self).__init__()

        self.Q1 = QNetwork(
            num_inputs, num_actions, hidden_units, initializer)
        self.Q2 = QNetwork(
            num_inputs, num_actions, hidden_units, initializer)

    def forward(self, states, actions):
        x = torch.cat([states, actions], dim=1)
        q1 = self.Q1(x)
        q2 = self.Q2(x)
        return q1, q2


class GaussianPolicy(BaseNetwork):
    LOG_STD_MAX = 2
    LOG_STD_MIN = -20
    eps = 1e-6

    def __init__(self, num_inputs, num_actions, hidden_units=[256, 256],
                 initializer='xavier'):
        super(GaussianPolicy, self).__init__()
        self.policy = create_linear_network(
            num_inputs, num_actions*2, hidden_units=hidden_units,
            initializer=initializer)

    def forward(self, states):
        mean, log_std = torch.chunk(self.policy(states), 2, dim=-1)
        log_std = torch.clamp(
            log_std, min=self.LOG_STD_MIN, max=self.LOG_STD_MAX)

        return mean, log_std

    def sample(self, states):
        # calculate Gaussian distribusion of (mean, std)
        means, log_stds = self.forward(states)
        stds = log_stds.exp()
        normals = Normal(means, stds)
        # sample actions
        xs = normals.rsample()
        actions = torch.tanh(xs)
        # calculate entropies
        log_probs = normals.log_prob(xs)\
            - torch.log(1 - actions.pow(2) + self.eps)
        entropies = -log_probs.sum(dim=1, keepdim=True)

        return actions, entropies, torch.tanh(means)


class SacAgent:

    def __init__(self, obs_dim, act_dim, batches, lr=0.0003, hidden_units=[16, 16], gamma=0.99, tau=0.005,
                 grad_clip=None, target_update_interval=1, entropy_tuning=True):
        self.policy = GaussianPolicy(obs_dim, act_dim, hidden_units=hidden_units)
        self.critic = TwinnedQNetwork(obs_dim, act_dim, hidden_units=hidden_units)
        self.critic_target = TwinnedQNetwork(obs_dim, act_dim, hidden_units=hidden_units).eval()

        # copy parameters of the learning network to the target network
        hard_update(self.critic_target, self.critic)
        # disable gradient calculations of the target network
        grad_false(self.critic_target)

        self.policy_optim = Adam(self.policy.parameters(), lr=lr)
        self.q1_optim = Adam(self.critic.Q1.parameters(), lr=lr)
        self.q2_optim = Adam(self.critic.Q2.parameters(), lr=lr)

        self.entropy_tuning = entropy_tuning
        # Target entropy is -|A|.
        self.target_entropy = -float(act_dim)
        # We optimize log(alpha), instead of alpha.
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha = self.log_alpha.exp()
        self.alpha_optim = Adam([self.log_alpha], lr=lr)

        self.batches = batches
        self.per = False
        self.gamma_n = gamma
        self.tau = tau
        self.grad_clip = grad_clip
        self.target_update_interval = target_update_interval
        self.learning_steps = 0

    def learn(self):
        self.learning_steps += 1
        if self.learning_steps % self.target_update_interval == 0:
            soft_update(self.critic_target, self.critic, self.tau)

        batch = self.batches[self.learning_steps - 1]
        # set priority weights to 1 when we don't use PER.
        weights = 1.

        q1_loss, q2_loss, errors, mean_q1, mean_q2 =\
            self.calc_critic_loss(batch, weights)

        update_params(
            self.q1_optim, self.critic.Q1, q1_loss, self.grad_clip)
        update_params(
            self.q2_optim, self.critic.Q2, q2_loss, self.grad_clip)

        # calculate `policy_loss` after updating `Q1、Q2`
        policy_loss, entropies = self.calc_policy_loss(batch, weights)
        update_params(
            self.policy_optim, self.policy, policy_loss, self.grad_clip)

        if self.entropy_tuning:
            entropy_loss = self.calc_entropy_loss(entropies, weights)
            update_params(self.alpha_optim, None, entropy_loss)
            self.alpha = self.log_alpha.exp()

    def calc_current_q(self, states, actions, rewards, next_states, dones):
        curr_q1, curr_q2 = self.critic(states, actions)
        return curr_q1, curr_q2

    def calc_target_q(self, states, actions, rewards, next_states, dones):
        with torch.no_grad():
            next_actions, next_entropies, _ = self.policy.sample(next_states)
            next_q1, next_q2 = self.critic_target(next_states, next_actions)
            next_q = torch.min(next_q1, next_q2) + self.alpha * next_entropies

        target_q = rewards + (1.0 - dones) * self.gamma_n * next_q

        return target_q

    def calc_critic_loss(self, batch, weights):
        curr_q1, curr_q2 = self.calc_current_q(*batch)
        target_q = self.calc_target_q(*batch)

        # TD errors for updating priority weights
        errors = torch.abs(curr_q1.detach() - target_q)
        # We log means of Q to monitor training.
        mean_q1 = curr_q1.detach().mean().item()
        mean_q2 = curr_q2.detach().mean().item()

        # Critic loss is mean squared TD errors with priority weights.
        q1_loss = torch.mean((curr_q1 - target_q).pow(2) * weights)
        q2_loss = torch.mean((curr_q2 - target_q).pow(2) * weights)
        return q1_loss, q2_loss, errors, mean_q1, mean_q2

    def calc_policy_loss(self, batch, weights):
        states, actions, rewards, next_states, dones = batch

        # We re-sample actions to calculate expectations of Q.
        sampled_action, entropy, _ = self.policy.sample(states)
        # expectations of Q with clipped double Q technique
        q1, q2 = self.critic(states, sampled_action)
        q = torch.min(q1, q2)

        # Policy objective is maximization of (Q + alpha * entropy) with
        # priority weights.
        policy_loss = torch.mean((- q - self.alpha * entropy) * weights)
        return policy_loss, entropy

    def calc_entropy_loss(self, entropy, weights):
        entropy_loss = -torch.mean(
            self.log_alpha * (self.target_entropy - entropy).detach()
            * weights)
        return entropy_loss


def compute():
    torch.manual_seed(0)
    obs_dim, act_dim, n = 5, 2, 8
    batches = [(torch.randn(n, obs_dim), torch.rand(n, act_dim) * 2 - 1, torch.randn(n, 1),
                torch.randn(n, obs_dim), torch.zeros(n, 1)) for _ in range(2)]
    agent = SacAgent(obs_dim, act_dim, batches)
    out = {}
    for step in range(2):
        agent.learn()
        out.update({"step%d.policy.%s" % (step, k): p.grad.clone() for k, p in agent.policy.named_parameters()})
        out.update({"step%d.critic.%s" % (step, k): p.grad.clone() for k, p in agent.critic.named_parameters()})
    out.update({"final.policy." + k: p.detach().clone() for k, p in agent.policy.named_parameters()})
    out.update({"final.critic." + k: p.detach().clone() for k, p in agent.critic.named_parameters()})
    out["final.log_alpha"] = agent.log_alpha.detach().clone()
    return out


if __name__ == "__main__":
    compute()
