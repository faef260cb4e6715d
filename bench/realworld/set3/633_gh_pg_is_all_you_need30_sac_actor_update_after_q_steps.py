# source: https://github.com/MrSyee/pg-is-all-you-need/issues/30
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# pg-is-all-you-need 05.SAC.ipynb, SACAgent.update_model(): one forward computes the alpha, Q, V and actor losses;
# the Q and V optimizers step, and only then (every policy_update_freq steps) `actor_loss.backward()` runs through
# `q_pred = torch.min(self.qf_1(state, new_action), self.qf_2(state, new_action))`, whose Linear layers saved the
# Q weights that qf_1_optimizer.step() has just changed -> "one of the variables needed for gradient computation
# has been modified by an inplace operation" on torch >= 1.5. The fix reported in the issue (put the updates after
# all losses are backpropagated), acknowledged by the maintainer and applied in PR #31 ("move sac update code",
# commit 4112123): the actor update block is moved before the Q/V updates. Stand-ins: the gym Pendulum env and the
# numpy ReplayBuffer are replaced by a sampler of random torch tensors; compute() runs one update_model() on a
# policy-update step and returns all parameters afterwards.
# Note: moving the block also moves the vf_target soft update before the V step, so the ref's vf_target differs
# from the original order by about tau * lr (~1e-6); all other results are what the original order computes.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Normal
from typing import Tuple


def init_layer_uniform(layer: nn.Linear, init_w: float = 3e-3) -> nn.Linear:
    """Init uniform parameters on the single layer."""
    layer.weight.data.uniform_(-init_w, init_w)
    layer.bias.data.uniform_(-init_w, init_w)

    return layer


class Actor(nn.Module):
    def __init__(
        self, 
        in_dim: int, 
        out_dim: int,
        log_std_min: float = -20,
        log_std_max: float = 2,
    ):
        """Initialize."""
        super(Actor, self).__init__()
        
        # set the log std range
        self.log_std_min = log_std_min
        self.log_std_max = log_std_max
        
        # set the hidden layers
        self.hidden1 = nn.Linear(in_dim, 128)
        self.hidden2 = nn.Linear(128, 128)
        
        # set log_std layer
        self.log_std_layer = nn.Linear(128, out_dim)
        self.log_std_layer = init_layer_uniform(self.log_std_layer)

        # set mean layer
        self.mu_layer = nn.Linear(128, out_dim)
        self.mu_layer = init_layer_uniform(self.mu_layer)

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        """Forward method implementation."""
        x = F.relu(self.hidden1(state))
        x = F.relu(self.hidden2(x))
        
        # get mean
        mu = self.mu_layer(x).tanh()
        
        # get std
        log_std = self.log_std_layer(x).tanh()
        log_std = self.log_std_min + 0.5 * (
            self.log_std_max - self.log_std_min
        ) * (log_std + 1)
        std = torch.exp(log_std)
        
        # sample actions
        dist = Normal(mu, std)
        z = dist.rsample()
        
        # normalize action and log_prob
        # see appendix C of [2]
        action = z.tanh()
        log_prob = dist.log_prob(z) - torch.log(1 - action.pow(2) + 1e-7)
        log_prob = log_prob.sum(-1, keepdim=True)
        
        return action, log_prob
    
    
class CriticQ(nn.Module):
    def __init__(self, in_dim: int):
        """Initialize."""
        super(CriticQ, self).__init__()
        
        self.hidden1 = nn.Linear(in_dim, 128)
        self.hidden2 = nn.Linear(128, 128)
        self.out = nn.Linear(128, 1)
        self.out = init_layer_uniform(self.out)

    def forward(
        self, state: torch.Tensor, action: torch.Tensor
    ) -> torch.Tensor:
        """Forward method implementation."""
        x = torch.cat((state, action), dim=-1)
        x = F.relu(self.hidden1(x))
        x = F.relu(self.hidden2(x))
        value = self.out(x)
        
        return value
    
    
class CriticV(nn.Module):
    def __init__(self, in_dim: int):
        """Initialize."""
        super(CriticV, self).__init__()
        
        self.hidden1 = nn.Linear(in_dim, 128)
        self.hidden2 = nn.Linear(128, 128)
        self.out = nn.Linear(128, 1)
        self.out = init_layer_uniform(self.out)

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        """Forward method implementation."""
        x = F.relu(self.hidden1(state))
        x = F.relu(self.hidden2(x))
        value = self.out(x)
        
        return value


class ReplayBufferStandIn:
    """Stand-in for the notebook's ReplayBuffer filled with Pendulum-v0 transitions: random torch tensors."""
    def __init__(self, obs_dim: int, batch_size: int):
        self.obs_dim, self.batch_size = obs_dim, batch_size

    def sample_batch(self):
        return dict(obs=torch.randn(self.batch_size, self.obs_dim),
                    next_obs=torch.randn(self.batch_size, self.obs_dim),
                    acts=torch.rand(self.batch_size) * 2 - 1,
                    rews=torch.randn(self.batch_size),
                    done=(torch.rand(self.batch_size) < 0.1).float())


class SACAgent:
    """SAC agent (the notebook's class without env, plotting and the training loop)."""
    
    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        batch_size: int,
        gamma: float = 0.99,
        tau: float = 5e-3,
        policy_update_freq: int = 2,
    ):
        """Initialize."""
        self.memory = ReplayBufferStandIn(obs_dim, batch_size)
        self.batch_size = batch_size
        self.gamma = gamma
        self.tau = tau
        self.policy_update_freq = policy_update_freq

        self.device = torch.device("cpu")
        
        # automatic entropy tuning
        self.target_entropy = -float(action_dim)  # heuristic (-np.prod((action_dim,)).item())
        self.log_alpha = torch.zeros(1, requires_grad=True, device=self.device)
        self.alpha_optimizer = optim.Adam([self.log_alpha], lr=3e-4)

        # actor
        self.actor = Actor(obs_dim, action_dim).to(self.device)
        
        # v function
        self.vf = CriticV(obs_dim).to(self.device)
        self.vf_target = CriticV(obs_dim).to(self.device)
        self.vf_target.load_state_dict(self.vf.state_dict())
        
        # q function
        self.qf_1 = CriticQ(obs_dim + action_dim).to(self.device)
        self.qf_2 = CriticQ(obs_dim + action_dim).to(self.device)

        # optimizers
        self.actor_optimizer = optim.Adam(self.actor.parameters(), lr=3e-4)
        self.vf_optimizer = optim.Adam(self.vf.parameters(), lr=3e-4)
        self.qf_1_optimizer = optim.Adam(self.qf_1.parameters(), lr=3e-4)
        self.qf_2_optimizer = optim.Adam(self.qf_2.parameters(), lr=3e-4)
        
        # total steps count
        self.total_step = 0

    def update_model(self) -> Tuple[torch.Tensor, ...]:
        """Update the model by gradient descent."""
        device = self.device  # for shortening the following lines
        
        samples = self.memory.sample_batch()
        state = torch.FloatTensor(samples["obs"]).to(device)
        next_state = torch.FloatTensor(samples["next_obs"]).to(device)
        action = torch.FloatTensor(samples["acts"].reshape(-1, 1)).to(device)
        reward = torch.FloatTensor(samples["rews"].reshape(-1, 1)).to(device)
        done = torch.FloatTensor(samples["done"].reshape(-1, 1)).to(device)
        new_action, log_prob = self.actor(state)
        
        # train alpha (dual problem)
        alpha_loss = (
            -self.log_alpha.exp() * (log_prob + self.target_entropy).detach()
        ).mean()

        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.alpha_optimizer.step()
        
        alpha = self.log_alpha.exp()  # used for the actor loss calculation
        
        # q function loss
        mask = 1 - done
        q_1_pred = self.qf_1(state, action)
        q_2_pred = self.qf_2(state, action)
        v_target = self.vf_target(next_state)
        q_target = reward + self.gamma * v_target * mask
        qf_1_loss = F.mse_loss(q_1_pred, q_target.detach())
        qf_2_loss = F.mse_loss(q_2_pred, q_target.detach())
        
        # v function loss
        v_pred = self.vf(state)
        q_pred = torch.min(
            self.qf_1(state, new_action), self.qf_2(state, new_action)
        )
        v_target = q_pred - alpha * log_prob
        vf_loss = F.mse_loss(v_pred, v_target.detach())
        
        # train Q functions
        self.qf_1_optimizer.zero_grad()
        qf_1_loss.backward()
        self.qf_1_optimizer.step()

        self.qf_2_optimizer.zero_grad()
        qf_2_loss.backward()
        self.qf_2_optimizer.step()
        
        qf_loss = qf_1_loss + qf_2_loss

        # train V function
        self.vf_optimizer.zero_grad()
        vf_loss.backward()
        self.vf_optimizer.step()
        
        if self.total_step % self.policy_update_freq == 0:
            # actor loss
            advantage = q_pred - v_pred.detach()
            actor_loss = (alpha * log_prob - advantage).mean()
            
            # train actor
            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            self.actor_optimizer.step()
        
            # target update (vf)
            self._target_soft_update()
        else:
            actor_loss = torch.zeros(1)
        
        return actor_loss.data, qf_loss.data, vf_loss.data, alpha_loss.data
    
    def _target_soft_update(self):
        """Soft-update: target = tau*local + (1-tau)*target."""
        tau = self.tau
        
        for t_param, l_param in zip(
            self.vf_target.parameters(), self.vf.parameters()
        ):
            t_param.data.copy_(tau * l_param.data + (1.0 - tau) * t_param.data)


def compute():
    torch.manual_seed(0)
    agent = SACAgent(obs_dim=3, action_dim=1, batch_size=16)  # Pendulum-v0 sizes
    agent.total_step = 2  # a step on which the policy is updated (policy_update_freq=2)
    agent.update_model()
    out = {"log_alpha": agent.log_alpha.detach().clone()}
    for name, net in [("actor", agent.actor), ("qf_1", agent.qf_1), ("qf_2", agent.qf_2), ("vf", agent.vf),
                      ("vf_target", agent.vf_target)]:
        for n, p in net.named_parameters():
            out[f"{name}.{n}"] = p.detach().clone()
    return out


if __name__ == "__main__":
    compute()
