# source: https://github.com/p-christ/Deep-Reinforcement-Learning-Algorithms-with-PyTorch/issues/56
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# Deep-Reinforcement-Learning-Algorithms-with-PyTorch (p-christ), agents/actor_critic_agents/SAC.py + SAC_Discrete.py:
# SAC.learn computes both critic losses and then the actor loss (`calculate_actor_loss` runs critic_local and
# critic_local_2 on the batch), and only then `update_all_parameters` backpropagates and steps critic 1, critic 2 and
# then the actor; the critics' Adam steps updated their weights in place, which the actor loss's graph saved, so
# `actor_loss.backward()` fails on torch >= 1.5 ("Sac Discrete Error", issue #56: "Error detected in AddmmBackward ...
# qf2_pi = self.critic_local_2(state_batch)"). The fix, PR #60 (merged, commit 8cc5c59 "fix errors of SAC and
# SAC-Discrete caused by torch>=1.4.0"): `update_critic_parameters(qf1_loss, qf2_loss)` (critic steps and soft target
# updates) right after the critic losses, then the actor loss is computed through the updated critics and
# `update_actor_parameters(policy_loss, alpha_loss)`; the actor's gradient now comes from the stepped critics, so the
# fix changes what one update computes.
# Stand-ins: no Base_Agent / config / environment: create_NN is a two-layer MLP (hidden 16; Softmax output for the
# actor), the replay buffer is a fixed random batch of 16 CartPole-like transitions (state 4, 2 actions),
# create_actor_distribution is torch.distributions.Categorical, the logger is dropped; hyper-parameters from the
# repository's CartPole config where they matter (lr 3e-4 actor / 3e-4 critic, tau 0.005, discount 0.99, clipping 5,
# automatic entropy tuning); np.log replaced by math.log; two learning iterations.
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical
from torch.optim import Adam

HYPERPARAMETERS = {
    "Actor": {"learning_rate": 0.0003, "gradient_clipping_norm": 5},
    "Critic": {"learning_rate": 0.0003, "gradient_clipping_norm": 5, "tau": 0.005},
    "discount_rate": 0.99,
    "automatically_tune_entropy_hyperparameter": True,
}


def create_NN(input_dim, output_dim, softmax=False):
    layers = [nn.Linear(input_dim, 16), nn.ReLU(), nn.Linear(16, output_dim)]
    if softmax:
        layers.append(nn.Softmax(dim=1))
    return nn.Sequential(*layers)


class SAC_Discrete:
    def __init__(self, state_size, action_size):
        self.hyperparameters = HYPERPARAMETERS
        self.action_size = action_size
        self.critic_local = create_NN(state_size, action_size)
        self.critic_local_2 = create_NN(state_size, action_size)
        self.critic_optimizer = torch.optim.Adam(self.critic_local.parameters(),
                                                 lr=self.hyperparameters["Critic"]["learning_rate"], eps=1e-4)
        self.critic_optimizer_2 = torch.optim.Adam(self.critic_local_2.parameters(),
                                                   lr=self.hyperparameters["Critic"]["learning_rate"], eps=1e-4)
        self.critic_target = create_NN(state_size, action_size)
        self.critic_target_2 = create_NN(state_size, action_size)
        self.critic_target.load_state_dict(self.critic_local.state_dict())
        self.critic_target_2.load_state_dict(self.critic_local_2.state_dict())
        self.actor_local = create_NN(state_size, action_size, softmax=True)
        self.actor_optimizer = torch.optim.Adam(self.actor_local.parameters(),
                                                lr=self.hyperparameters["Actor"]["learning_rate"], eps=1e-4)
        self.automatic_entropy_tuning = self.hyperparameters["automatically_tune_entropy_hyperparameter"]
        # we set the max possible entropy as the target entropy
        self.target_entropy = -math.log((1.0 / self.action_size)) * 0.98
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha = self.log_alpha.exp()
        self.alpha_optim = Adam([self.log_alpha], lr=self.hyperparameters["Actor"]["learning_rate"], eps=1e-4)

    def produce_action_and_action_info(self, state):
        action_probabilities = self.actor_local(state)
        max_probability_action = torch.argmax(action_probabilities, dim=1)
        action_distribution = Categorical(action_probabilities)
        action = action_distribution.sample().cpu()
        # Have to deal with situation of 0.0 probabilities because we can't do log 0
        z = action_probabilities == 0.0
        z = z.float() * 1e-8
        log_action_probabilities = torch.log(action_probabilities + z)
        return action, (action_probabilities, log_action_probabilities), max_probability_action

    def calculate_critic_losses(self, state_batch, action_batch, reward_batch, next_state_batch, mask_batch):
        with torch.no_grad():
            next_state_action, (action_probabilities, log_action_probabilities), _ = \
                self.produce_action_and_action_info(next_state_batch)
            qf1_next_target = self.critic_target(next_state_batch)
            qf2_next_target = self.critic_target_2(next_state_batch)
            min_qf_next_target = action_probabilities * (
                torch.min(qf1_next_target, qf2_next_target) - self.alpha * log_action_probabilities)
            min_qf_next_target = min_qf_next_target.sum(dim=1).unsqueeze(-1)
            next_q_value = reward_batch + (1.0 - mask_batch) * self.hyperparameters["discount_rate"] * (min_qf_next_target)
        qf1 = self.critic_local(state_batch).gather(1, action_batch.long())
        qf2 = self.critic_local_2(state_batch).gather(1, action_batch.long())
        qf1_loss = F.mse_loss(qf1, next_q_value)
        qf2_loss = F.mse_loss(qf2, next_q_value)
        return qf1_loss, qf2_loss

    def calculate_actor_loss(self, state_batch):
        action, (action_probabilities, log_action_probabilities), _ = self.produce_action_and_action_info(state_batch)
        qf1_pi = self.critic_local(state_batch)
        qf2_pi = self.critic_local_2(state_batch)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        inside_term = self.alpha * log_action_probabilities - min_qf_pi
        policy_loss = (action_probabilities * inside_term).sum(dim=1).mean()
        log_action_probabilities = torch.sum(log_action_probabilities * action_probabilities, dim=1)
        return policy_loss, log_action_probabilities

    def calculate_entropy_tuning_loss(self, log_pi):
        alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
        return alpha_loss

    def take_optimisation_step(self, optimizer, network, loss, clipping_norm=None, retain_graph=False):
        if not isinstance(network, list): network = [network]
        optimizer.zero_grad()  # reset gradients to 0
        loss.backward(retain_graph=retain_graph)  # this calculates the gradients
        if clipping_norm is not None:
            for net in network:
                torch.nn.utils.clip_grad_norm_(net.parameters(), clipping_norm)
        optimizer.step()  # this applies the gradients

    def soft_update_of_target_network(self, local_model, target_model, tau):
        for target_param, local_param in zip(target_model.parameters(), local_model.parameters()):
            target_param.data.copy_(tau * local_param.data + (1.0 - tau) * target_param.data)

    def learn(self, experiences):
        state_batch, action_batch, reward_batch, next_state_batch, mask_batch = experiences
        qf1_loss, qf2_loss = self.calculate_critic_losses(state_batch, action_batch, reward_batch, next_state_batch,
                                                          mask_batch)
        policy_loss, log_pi = self.calculate_actor_loss(state_batch)
        if self.automatic_entropy_tuning: alpha_loss = self.calculate_entropy_tuning_loss(log_pi)
        else: alpha_loss = None
        self.update_all_parameters(qf1_loss, qf2_loss, policy_loss, alpha_loss)

    def update_all_parameters(self, critic_loss_1, critic_loss_2, actor_loss, alpha_loss):
        self.take_optimisation_step(self.critic_optimizer, self.critic_local, critic_loss_1,
                                    self.hyperparameters["Critic"]["gradient_clipping_norm"])
        self.take_optimisation_step(self.critic_optimizer_2, self.critic_local_2, critic_loss_2,
                                    self.hyperparameters["Critic"]["gradient_clipping_norm"])
        self.take_optimisation_step(self.actor_optimizer, self.actor_local, actor_loss,
                                    self.hyperparameters["Actor"]["gradient_clipping_norm"])
        self.soft_update_of_target_network(self.critic_local, self.critic_target,
                                           self.hyperparameters["Critic"]["tau"])
        self.soft_update_of_target_network(self.critic_local_2, self.critic_target_2,
                                           self.hyperparameters["Critic"]["tau"])
        if alpha_loss is not None:
            self.take_optimisation_step(self.alpha_optim, None, alpha_loss, None)
            self.alpha = self.log_alpha.exp()


def compute():
    torch.manual_seed(0)
    agent = SAC_Discrete(state_size=4, action_size=2)
    states = torch.randn(16, 4)
    actions = torch.randint(0, 2, (16, 1)).float()
    rewards = torch.ones(16, 1)
    next_states = states + 0.1 * torch.randn(16, 4)
    dones = (torch.rand(16, 1) < 0.1).float()
    for _ in range(2):
        agent.learn((states, actions, rewards, next_states, dones))
    out = {}
    for prefix, net in (("actor", agent.actor_local), ("critic", agent.critic_local), ("critic2", agent.critic_local_2)):
        for n, p in net.named_parameters():
            out[prefix + "." + n] = p.detach().clone()
    out["log_alpha"] = agent.log_alpha.detach().clone()
    return out


if __name__ == "__main__":
    compute()
