# source: https://github.com/reinforcement-learning-kr/pg_travel/issues/22
# pattern: other
# codemod_fixable: no
# error: A
# ref_semantics: differs
# PPO train_model: one combined loss (actor_loss + 0.5 * critic_loss) is back-propagated twice -- first with
# retain_graph=True followed by critic_optim.step(), then again for the actor. The critic step rewrote the critic
# weights that the retained graph still needs, so the second backward fails. Needs a restructured update.
import numpy as np
import torch
import torch.nn as nn


class HyperParams:
    gamma = 0.99
    lamda = 0.98
    hidden = 16
    batch_size = 4
    actor_lr = 3e-4
    critic_lr = 3e-4
    clip_param = 0.2


hp = HyperParams


class Actor(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(Actor, self).__init__()
        self.fc1 = nn.Linear(num_inputs, hp.hidden)
        self.fc2 = nn.Linear(hp.hidden, hp.hidden)
        self.fc3 = nn.Linear(hp.hidden, num_outputs)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        mu = self.fc3(x)
        logstd = torch.zeros_like(mu)
        std = torch.exp(logstd)
        return mu, std, logstd


class Critic(nn.Module):
    def __init__(self, num_inputs):
        super(Critic, self).__init__()
        self.fc1 = nn.Linear(num_inputs, hp.hidden)
        self.fc2 = nn.Linear(hp.hidden, hp.hidden)
        self.fc3 = nn.Linear(hp.hidden, 1)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        v = self.fc3(x)
        return v


def log_density(x, mu, std, logstd):
    var = std.pow(2)
    log_density = -(x - mu).pow(2) / (2 * var) - 0.5 * np.log(2 * np.pi) - logstd
    return log_density.sum(1, keepdim=True)


def get_gae(rewards, masks, values):
    rewards = torch.Tensor(rewards)
    masks = torch.Tensor(masks)
    returns = torch.zeros_like(rewards)
    advants = torch.zeros_like(rewards)

    running_returns = 0
    previous_value = 0
    running_advants = 0

    for t in reversed(range(0, len(rewards))):
        running_returns = rewards[t] + hp.gamma * running_returns * masks[t]
        running_tderror = rewards[t] + hp.gamma * previous_value * masks[t] - values.data[t]
        running_advants = running_tderror + hp.gamma * hp.lamda * running_advants * masks[t]

        returns[t] = running_returns
        previous_value = values.data[t]
        advants[t] = running_advants

    advants = (advants - advants.mean()) / advants.std()
    return returns, advants


def surrogate_loss(actor, advants, states, old_policy, actions, index):
    mu, std, logstd = actor(torch.Tensor(states))
    new_policy = log_density(actions, mu, std, logstd)
    old_policy = old_policy[index]

    ratio = torch.exp(new_policy - old_policy)
    surrogate = ratio * advants
    return surrogate, ratio


def train_model(actor, critic, memory, actor_optim, critic_optim):
    memory = np.array(memory, dtype=object)
    states = np.vstack(memory[:, 0]).astype(np.float32)
    actions = list(memory[:, 1])
    rewards = list(memory[:, 2])
    masks = list(memory[:, 3])
    values = critic(torch.Tensor(states))

    # ----------------------------
    # step 1: get returns and GAEs and log probability of old policy
    returns, advants = get_gae(rewards, masks, values)
    mu, std, logstd = actor(torch.Tensor(states))
    old_policy = log_density(torch.Tensor(np.array(actions)), mu, std, logstd)
    old_values = critic(torch.Tensor(states))

    criterion = torch.nn.MSELoss()
    n = len(states)
    arr = np.arange(n)
    grads = {}

    # ----------------------------
    # step 2: get value loss and actor loss and update actor & critic
    for epoch in range(2):
        np.random.shuffle(arr)

        for i in range(n // hp.batch_size):
            batch_index = arr[hp.batch_size * i: hp.batch_size * (i + 1)]
            batch_index = torch.LongTensor(batch_index)
            inputs = torch.Tensor(states)[batch_index]
            returns_samples = returns.unsqueeze(1)[batch_index]
            advants_samples = advants.unsqueeze(1)[batch_index]
            actions_samples = torch.Tensor(np.array(actions))[batch_index]
            oldvalue_samples = old_values[batch_index].detach()

            loss, ratio = surrogate_loss(actor, advants_samples, inputs,
                                         old_policy.detach(), actions_samples,
                                         batch_index)

            values = critic(inputs)
            clipped_values = oldvalue_samples + \
                torch.clamp(values - oldvalue_samples, -hp.clip_param, hp.clip_param)
            critic_loss1 = criterion(clipped_values, returns_samples)
            critic_loss2 = criterion(values, returns_samples)
            critic_loss = torch.max(critic_loss1, critic_loss2).mean()

            clipped_ratio = torch.clamp(ratio, 1.0 - hp.clip_param, 1.0 + hp.clip_param)
            clipped_loss = clipped_ratio * advants_samples
            actor_loss = -torch.min(loss, clipped_loss).mean()

            loss = actor_loss + 0.5 * critic_loss

            critic_optim.zero_grad()
            loss.backward(retain_graph=True)
            critic_optim.step()

            actor_optim.zero_grad()
            loss.backward()
            grads = {**{'actor.' + k: p.grad.clone() for k, p in actor.named_parameters()},
                     **{'critic.' + k: p.grad.clone() for k, p in critic.named_parameters()}}
            actor_optim.step()
    return grads


def compute():
    torch.manual_seed(0)
    np.random.seed(0)
    num_inputs, num_actions, n = 3, 2, 8
    actor, critic = Actor(num_inputs, num_actions), Critic(num_inputs)
    actor_optim = torch.optim.Adam(actor.parameters(), lr=hp.actor_lr)
    critic_optim = torch.optim.Adam(critic.parameters(), lr=hp.critic_lr)
    memory = []
    for t in range(n):
        state = torch.randn(num_inputs).numpy()
        action = torch.randn(num_actions).numpy()
        reward = float(torch.randn(()))
        mask = 0.0 if t == n - 1 else 1.0
        memory.append([state, action, reward, mask])
    return train_model(actor, critic, memory, actor_optim, critic_optim)


if __name__ == "__main__":
    compute()
