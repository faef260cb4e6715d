# reference fix for 611 (spirl#6, as in the current ac_agent.py): update the policy before the critics
import copy

import torch
import torch.nn as nn


class AttrDict(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


class TensorModule(nn.Module):
    def __init__(self, t):
        super().__init__()
        self.t = nn.Parameter(t)

    def forward(self, *args, **kwargs):
        return self.t


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, 2 * action_dim))

    def forward(self, obs):
        mu, log_std = self.net(obs).chunk(2, -1)
        dist = torch.distributions.Normal(mu, log_std.clamp(-5, 2).exp())
        action = dist.rsample()
        return AttrDict(action=action, log_prob=dist.log_prob(action).sum(-1), dist=dist)


class Critic(nn.Module):
    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, action):
        return AttrDict(q=self.net(torch.cat([obs, action], -1)))


class SACAgent(nn.Module):
    def __init__(self, obs_dim=4, action_dim=2, batch_size=8, discount_factor=0.99, reward_scale=1.0):
        super().__init__()
        self.batch_size, self.discount_factor, self.reward_scale = batch_size, discount_factor, reward_scale
        self.policy = GaussianPolicy(obs_dim, action_dim)
        self.policy_opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.critics = nn.ModuleList([Critic(obs_dim, action_dim) for _ in range(2)])
        self.critic_targets = nn.ModuleList([copy.deepcopy(c) for c in self.critics])
        self.critic_opts = [torch.optim.Adam(c.parameters(), lr=3e-4) for c in self.critics]
        self._log_alpha = TensorModule(torch.zeros(1, requires_grad=True))
        self.alpha_opt = torch.optim.Adam(self._log_alpha.parameters(), lr=3e-4)
        self._target_entropy = -1 * action_dim
        self.grads = {}

    @property
    def alpha(self):
        return self._log_alpha().exp()

    def _perform_update(self, loss, opt, network):
        opt.zero_grad()
        loss.backward()
        name = next(n for n, m in self.named_modules() if m is network)
        self.grads.update({"%s.%s" % (name, n): p.grad.clone() for n, p in network.named_parameters()
                           if p.grad is not None})
        opt.step()

    def _soft_update_target_network(self, target, source, tau=0.005):
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.data.copy_(target_param.data * (1.0 - tau) + param.data * tau)

    def _run_policy(self, obs):
        return self.policy(obs)

    def _compute_alpha_loss(self, policy_output):
        return -1 * (self.alpha * (self._target_entropy + policy_output.log_prob).detach()).mean()

    def _compute_policy_loss(self, experience_batch, policy_output):
        q_est = torch.min(*[critic(experience_batch.observation, policy_output.action).q for critic in self.critics])
        policy_loss = -1 * q_est + self.alpha * policy_output.log_prob[:, None]
        return policy_loss.mean()

    def _compute_next_value(self, experience_batch, policy_output):
        q_next = torch.min(*[critic_target(experience_batch.observation_next, policy_output.action).q
                             for critic_target in self.critic_targets])
        next_val = (q_next - self.alpha * policy_output.log_prob[:, None])
        return next_val.squeeze(-1)

    def _compute_q_estimates(self, experience_batch):
        return [critic(experience_batch.observation, experience_batch.action.detach()).q.squeeze(-1)
                for critic in self.critics]

    def update(self, experience_batch):
        policy_output = self._run_policy(experience_batch.observation)

        # update alpha
        alpha_loss = self._compute_alpha_loss(policy_output)
        self._perform_update(alpha_loss, self.alpha_opt, self._log_alpha)

        # compute policy loss
        policy_loss = self._compute_policy_loss(experience_batch, policy_output)

        # compute target Q value
        with torch.no_grad():
            policy_output_next = self._run_policy(experience_batch.observation_next)
            value_next = self._compute_next_value(experience_batch, policy_output_next)
            q_target = experience_batch.reward * self.reward_scale + \
                (1 - experience_batch.done) * self.discount_factor * value_next
            q_target = q_target.detach()

        # compute critic loss
        qs = self._compute_q_estimates(experience_batch)
        critic_losses = [0.5 * (q - q_target).pow(2).mean() for q in qs]

        # update policy network on policy loss
        self._perform_update(policy_loss, self.policy_opt, self.policy)

        # update critic networks
        [self._perform_update(critic_loss, critic_opt, critic)
         for critic_loss, critic_opt, critic in zip(critic_losses, self.critic_opts, self.critics)]

        # update target networks
        [self._soft_update_target_network(critic_target, critic)
         for critic_target, critic in zip(self.critic_targets, self.critics)]
        return AttrDict(policy_loss=policy_loss, alpha_loss=alpha_loss)


def compute():
    torch.manual_seed(0)
    agent = SACAgent()
    n = agent.batch_size
    batch = AttrDict(observation=torch.randn(n, 4), observation_next=torch.randn(n, 4),
                     action=torch.randn(n, 2).tanh(), reward=torch.randn(n), done=torch.zeros(n))
    agent.update(batch)
    out = dict(agent.grads)
    out.update({"critic%d.%s" % (i, k): v.detach().clone()
                for i, c in enumerate(agent.critics) for k, v in c.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
