# source: https://github.com/juliusfrost/dreamer-pytorch/commit/1e1e2e2022258ac048858604bb0c60647cbfb084
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# dreamer-pytorch (Dreamer, model-based RL on rlpyt), dreamer/algos/dreamer_algo.py at the fix's parent (commit
# 286d871 "start discount cumprod from 1" had added the culprit). Dreamer.loss imagines a rollout with the policy
# through the (frozen) transition model, reads the reward and value heads' means, builds
# `discount_arr = self.discount * torch.ones_like(imag_reward)` and passes `discount_arr[:-1]` to compute_return,
# whose `target = reward + discount * next_values * (1 - lambda_)` saves that slice (MulBackward0 keeps `discount`
# for the gradient of `next_values`). The loss then writes `discount_arr[0] = 1` ("make the top row 1 so the
# cumulative product starts with discount^0"): the slice shares discount_arr's version counter, so
# `actor_loss.backward()` raises "one of the variables needed for gradient computation has been modified by an
# inplace operation". Fix (commit 1e1e2e2 "don't use in-place ops 'cuz gradients"):
# `discount_arr = torch.cat([torch.ones_like(discount_arr[:1]), discount_arr[1:]])`.
# Reduced (written anew, not copied): rlpyt's buffers and namedarraytuples, the observation encoder / decoder and the
# model loss are left out; stand-ins: the imagined rollout starts from a random posterior state `flat_post` (the
# real one comes from the representation model under no_grad), the transition model is one Linear + tanh on
# [state, action] with its parameters frozen as in rollout_policy, the policy a Linear + tanh (the real
# ActionDecoder samples a tanh-Normal), the reward and value heads small MLPs returning Normal distributions whose
# `.mean` is read, as in the source. compute() returns the actor loss and the policy's gradients.
import torch
import torch.nn as nn
import torch.distributions as td


class DenseModel(nn.Module):
    def __init__(self, feature_size, hidden_size=16):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(feature_size, hidden_size), nn.ELU(), nn.Linear(hidden_size, 1))

    def forward(self, features):
        return td.Independent(td.Normal(self.model(features), 1.0), 1)


class Policy(nn.Module):
    def __init__(self, feature_size, action_size):
        super().__init__()
        self.linear = nn.Linear(feature_size, action_size)

    def forward(self, state):
        return torch.tanh(self.linear(state))


class Transition(nn.Module):
    def __init__(self, feature_size, action_size):
        super().__init__()
        self.linear = nn.Linear(feature_size + action_size, feature_size)

    def forward(self, action, state):
        return torch.tanh(self.linear(torch.cat([state, action], dim=-1)))


class FreezeParameters:
    def __init__(self, modules):
        self.modules = modules
        self.param_states = [p.requires_grad for m in modules for p in m.parameters()]

    def __enter__(self):
        for m in self.modules:
            for p in m.parameters():
                p.requires_grad = False

    def __exit__(self, *args):
        i = 0
        for m in self.modules:
            for p in m.parameters():
                p.requires_grad = self.param_states[i]
                i += 1


class Dreamer:
    def __init__(self, feature_size=8, action_size=2, horizon=6, discount=0.99, discount_lambda=0.95):
        self.horizon = horizon
        self.discount = discount
        self.discount_lambda = discount_lambda
        self.policy = Policy(feature_size, action_size)
        self.transition_model = Transition(feature_size, action_size)
        self.reward_model = DenseModel(feature_size)
        self.value_model = DenseModel(feature_size)

    def rollout_policy(self, steps, flat_post):
        with FreezeParameters([self.transition_model]):
            state = flat_post.detach()
            next_states = []
            for t in range(steps):
                action = self.policy(state.detach())
                state = self.transition_model(action, state)
                next_states.append(state)
            return torch.stack(next_states, dim=0)

    def loss(self, flat_post):
        imag_feat = self.rollout_policy(self.horizon, flat_post)

        for p in self.reward_model.parameters():
            p.requires_grad = False
        for p in self.value_model.parameters():
            p.requires_grad = False

        imag_reward = self.reward_model(imag_feat).mean
        value = self.value_model(imag_feat).mean

        for p in self.reward_model.parameters():
            p.requires_grad = True
        for p in self.value_model.parameters():
            p.requires_grad = True

        # Compute the exponential discounted sum of rewards
        discount_arr = self.discount * torch.ones_like(imag_reward)
        returns = self.compute_return(imag_reward[:-1], value[:-1], discount_arr[:-1],
                                      bootstrap=value[-1], lambda_=self.discount_lambda)
        # Make the top row 1 so the cumulative product starts with discount^0
        discount_arr = torch.cat([torch.ones_like(discount_arr[:1]), discount_arr[1:]])
        discount = torch.cumprod(discount_arr[:-1], 0)
        actor_loss = -torch.mean(discount * returns)
        return actor_loss

    def compute_return(self, reward, value, discount, bootstrap, lambda_):
        next_values = torch.cat([value[1:], bootstrap[None]], 0)
        target = reward + discount * next_values * (1 - lambda_)
        timesteps = list(range(reward.shape[0] - 1, -1, -1))
        outputs = []
        accumulated_reward = bootstrap
        for t in timesteps:
            inp = target[t]
            discount_factor = discount[t]
            accumulated_reward = inp + discount_factor * lambda_ * accumulated_reward
            outputs.append(accumulated_reward)
        returns = torch.flip(torch.stack(outputs), [0])
        return returns


def compute():
    torch.manual_seed(0)
    algo = Dreamer()
    flat_post = torch.randn(5, 8)
    actor_loss = algo.loss(flat_post)
    actor_loss.backward()
    return {
        "actor_loss": actor_loss.detach(),
        "policy.weight.grad": algo.policy.linear.weight.grad,
        "policy.bias.grad": algo.policy.linear.bias.grad,
    }
