# source: https://github.com/medipixel/rl_algorithms/pull/274
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# PPOLearner.update_model() (rl_algorithms/ppo/learner.py before the PR): the combined
# total_loss = actor_loss + w_value * critic_loss - w_entropy * entropy is backpropagated with
# retain_graph=True for the critic, critic_optim.step() updates the critic in place, and the same total_loss is
# backpropagated again for the actor -> the second backward hits the stepped critic weights (torch >= 1.5).
# The merged PR ("Update torch version 1.3.1 to 1.6.0": "In PPO, separate loss that repeated in training phase")
# splits the loss: critic_loss_.backward(retain_graph=True) for the critic, actor_loss_.backward() for the actor.
# Brain(backbone, head) networks are replaced by small MLP stand-ins with the same call signatures
# (actor(state) -> (action, dist), critic(state) -> value); ppo utils are in 510helpers_ppo_utils.py.
import importlib.util
import os
from types import SimpleNamespace

import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_
import torch.optim as optim
from torch.distributions import Normal

_spec = importlib.util.spec_from_file_location(
    "ppo_utils", os.path.join(os.path.dirname(os.path.abspath(__file__)), "510helpers_ppo_utils.py"))
ppo_utils = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ppo_utils)


class GaussianActor(nn.Module):
    def __init__(self, state_size, output_size, hidden=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(state_size, hidden), nn.Tanh())
        self.mu = nn.Linear(hidden, output_size)
        self.log_std = nn.Linear(hidden, output_size)

    def forward(self, x):
        h = self.backbone(x)
        dist = Normal(torch.tanh(self.mu(h)), self.log_std(h).clamp(-20, 2).exp())
        return dist.sample(), dist


class Critic(nn.Module):
    def __init__(self, state_size, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_size, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


class PPOLearner:
    def __init__(self, hyper_params, optim_cfg, state_size, action_size):
        self.hyper_params = hyper_params
        self.optim_cfg = optim_cfg
        self.is_discrete = False
        self.actor = GaussianActor(state_size, action_size)
        self.critic = Critic(state_size)

        # create optimizer
        self.actor_optim = optim.Adam(
            self.actor.parameters(),
            lr=self.optim_cfg.lr_actor,
            weight_decay=self.optim_cfg.weight_decay,
        )

        self.critic_optim = optim.Adam(
            self.critic.parameters(),
            lr=self.optim_cfg.lr_critic,
            weight_decay=self.optim_cfg.weight_decay,
        )

    def update_model(self, experience, epsilon: float):
        """Update PPO actor and critic networks"""
        states, actions, rewards, values, log_probs, next_state, masks = experience
        next_value = self.critic(next_state)

        returns = ppo_utils.compute_gae(
            next_value,
            rewards,
            masks,
            values,
            self.hyper_params.gamma,
            self.hyper_params.tau,
        )

        states = torch.cat(states)
        actions = torch.cat(actions)
        returns = torch.cat(returns).detach()
        values = torch.cat(values).detach()
        log_probs = torch.cat(log_probs).detach()
        advantages = returns - values

        if self.hyper_params.standardize_advantage:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-7)

        actor_losses, critic_losses, total_losses = [], [], []
        self.grads = {}

        for it, (state, action, old_value, old_log_prob, return_, adv) in enumerate(ppo_utils.ppo_iter(
            self.hyper_params.epoch,
            self.hyper_params.batch_size,
            states,
            actions,
            values,
            log_probs,
            returns,
            advantages,
        )):
            # calculate ratios
            _, dist = self.actor(state)
            log_prob = dist.log_prob(action)
            ratio = (log_prob - old_log_prob).exp()

            # actor_loss
            surr_loss = ratio * adv
            clipped_surr_loss = torch.clamp(ratio, 1.0 - epsilon, 1.0 + epsilon) * adv
            actor_loss = -torch.min(surr_loss, clipped_surr_loss).mean()

            # critic_loss
            value = self.critic(state)
            if self.hyper_params.use_clipped_value_loss:
                value_pred_clipped = old_value + torch.clamp(
                    (value - old_value), -epsilon, epsilon
                )
                value_loss_clipped = (return_ - value_pred_clipped).pow(2)
                value_loss = (return_ - value).pow(2)
                critic_loss = 0.5 * torch.max(value_loss, value_loss_clipped).mean()
            else:
                critic_loss = 0.5 * (return_ - value).pow(2).mean()

            # entropy
            entropy = dist.entropy().mean()

            # total_loss
            w_value = self.hyper_params.w_value
            w_entropy = self.hyper_params.w_entropy

            total_loss = actor_loss + w_value * critic_loss - w_entropy * entropy

            # train critic
            gradient_clip_ac = self.hyper_params.gradient_clip_ac
            gradient_clip_cr = self.hyper_params.gradient_clip_cr

            self.critic_optim.zero_grad()
            total_loss.backward(retain_graph=True)
            clip_grad_norm_(self.critic.parameters(), gradient_clip_ac)
            self.grads.update({"it%d.critic.%s" % (it, n): p.grad.clone() for n, p in self.critic.named_parameters()})
            self.critic_optim.step()

            # train actor
            self.actor_optim.zero_grad()
            total_loss.backward()
            clip_grad_norm_(self.actor.parameters(), gradient_clip_cr)
            self.grads.update({"it%d.actor.%s" % (it, n): p.grad.clone() for n, p in self.actor.named_parameters()})
            self.actor_optim.step()

            actor_losses.append(actor_loss.item())
            critic_losses.append(critic_loss.item())
            total_losses.append(total_loss.item())

        actor_loss = sum(actor_losses) / len(actor_losses)
        critic_loss = sum(critic_losses) / len(critic_losses)
        total_loss = sum(total_losses) / len(total_losses)

        return actor_loss, critic_loss, total_loss


def compute():
    torch.manual_seed(0)
    state_size, action_size, rollout = 4, 2, 8
    hyper_params = SimpleNamespace(gamma=0.99, tau=0.95, standardize_advantage=True, epoch=2, batch_size=4,
                                   use_clipped_value_loss=True, w_value=1.0, w_entropy=1e-3,
                                   gradient_clip_ac=0.5, gradient_clip_cr=1.0)
    optim_cfg = SimpleNamespace(lr_actor=3e-4, lr_critic=1e-3, weight_decay=0.0)
    learner = PPOLearner(hyper_params, optim_cfg, state_size, action_size)
    states, actions, rewards, values, log_probs, masks = [], [], [], [], [], []
    with torch.no_grad():
        for _ in range(rollout):
            s = torch.randn(1, state_size)
            a, dist = learner.actor(s)
            states.append(s)
            actions.append(a)
            values.append(learner.critic(s))
            log_probs.append(dist.log_prob(a))
            rewards.append(torch.randn(1, 1))
            masks.append(torch.ones(1, 1))
    experience = (states, actions, rewards, values, log_probs, torch.randn(1, state_size), masks)
    learner.update_model(experience, epsilon=0.2)
    out = dict(learner.grads)
    out.update({"final.actor." + n: p.detach().clone() for n, p in learner.actor.named_parameters()})
    out.update({"final.critic." + n: p.detach().clone() for n, p in learner.critic.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
