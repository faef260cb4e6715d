# reference fix for 506 (the fix): actor_loss uses q_actions_.detach(), so qf1/qf2 steps no longer break
# the actor's backward (the actor then gets no gradient through Q).
import copy
import importlib.util
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from types import SimpleNamespace

_spec = importlib.util.spec_from_file_location(
    "utils", os.path.join(os.path.dirname(os.path.abspath(__file__)), "506helpers_utils.py"))
_utils = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_utils)
get_action_info = _utils.get_action_info


# the flatten mlp
class flatten_mlp(nn.Module):
    def __init__(self, input_dims, hidden_size, action_dims=None):
        super(flatten_mlp, self).__init__()
        self.fc1 = nn.Linear(input_dims, hidden_size) if action_dims is None else nn.Linear(input_dims + action_dims, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.q_value = nn.Linear(hidden_size, 1)

    def forward(self, obs, action=None):
        inputs = torch.cat([obs, action], dim=1) if action is not None else obs
        x = F.relu(self.fc1(inputs))
        x = F.relu(self.fc2(x))
        output = self.q_value(x)
        return output


# define the policy network - tanh gaussian policy network
class tanh_gaussian_actor(nn.Module):
    def __init__(self, input_dims, action_dims, hidden_size, log_std_min, log_std_max):
        super(tanh_gaussian_actor, self).__init__()
        self.fc1 = nn.Linear(input_dims, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.mean = nn.Linear(hidden_size, action_dims)
        self.log_std = nn.Linear(hidden_size, action_dims)
        # the log_std_min and log_std_max
        self.log_std_min = log_std_min
        self.log_std_max = log_std_max

    def forward(self, obs):
        x = F.relu(self.fc1(obs))
        x = F.relu(self.fc2(x))
        mean = self.mean(x)
        log_std = self.log_std(x)
        # clamp the log std
        log_std = torch.clamp(log_std, min=self.log_std_min, max=self.log_std_max)
        return (mean, torch.exp(log_std))


# the soft-actor-critic agent
class sac_agent:
    def __init__(self, obs_dim, act_dim, args, batches):
        self.args = args
        # build up the network that will be used.
        self.qf1 = flatten_mlp(obs_dim, self.args.hidden_size, act_dim)
        self.qf2 = flatten_mlp(obs_dim, self.args.hidden_size, act_dim)
        # set the target q functions
        self.target_qf1 = copy.deepcopy(self.qf1)
        self.target_qf2 = copy.deepcopy(self.qf2)
        # build up the policy network
        self.actor_net = tanh_gaussian_actor(obs_dim, act_dim, self.args.hidden_size, \
                                            self.args.log_std_min, self.args.log_std_max)
        # define the optimizer for them
        self.qf1_optim = torch.optim.Adam(self.qf1.parameters(), lr=self.args.q_lr)
        self.qf2_optim = torch.optim.Adam(self.qf2.parameters(), lr=self.args.q_lr)
        # the optimizer for the policy network
        self.actor_optim = torch.optim.Adam(self.actor_net.parameters(), lr=self.args.p_lr)
        # entorpy target
        self.target_entropy = -float(act_dim)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        # define the optimizer
        self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=self.args.p_lr)
        self.batches = batches

    def _update_newtork(self, it):
        obses, actions, rewards, obses_, dones = self.batches[it]
        rewards = rewards.unsqueeze(-1)
        inverse_dones = (1 - dones).unsqueeze(-1)
        # start to update the actor network
        pis = self.actor_net(obses)
        actions_info = get_action_info(pis, cuda=self.args.cuda)
        actions_, pre_tanh_value = actions_info.select_actions(reparameterize=True)
        log_prob = actions_info.get_log_prob(actions_, pre_tanh_value)
        # use the automatically tuning
        alpha_loss = -(self.log_alpha * (log_prob + self.target_entropy).detach()).mean()
        self.alpha_optim.zero_grad()
        alpha_loss.backward()
        self.alpha_optim.step()
        # get the param
        alpha = self.log_alpha.exp()
        # get the q_value for new actions
        q_actions_ = torch.min(self.qf1(obses, actions_), self.qf2(obses, actions_))
        actor_loss = (alpha * log_prob - q_actions_.detach()).mean()
        # q value function loss
        q1_value = self.qf1(obses, actions)
        q2_value = self.qf2(obses, actions)
        with torch.no_grad():
            pis_next = self.actor_net(obses_)
            actions_info_next = get_action_info(pis_next, cuda=self.args.cuda)
            actions_next_, pre_tanh_value_next = actions_info_next.select_actions(reparameterize=True)
            log_prob_next = actions_info_next.get_log_prob(actions_next_, pre_tanh_value_next)
            target_q_value_next = torch.min(self.target_qf1(obses_, actions_next_), self.target_qf2(obses_, actions_next_)) - alpha * log_prob_next
            target_q_value = self.args.reward_scale * rewards + inverse_dones * self.args.gamma * target_q_value_next
        qf1_loss = (q1_value - target_q_value).pow(2).mean()
        qf2_loss = (q2_value - target_q_value).pow(2).mean()
        # qf1
        self.qf1_optim.zero_grad()
        qf1_loss.backward()
        self.qf1_optim.step()
        # qf2
        self.qf2_optim.zero_grad()
        qf2_loss.backward()
        self.qf2_optim.step()
        # policy loss
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return qf1_loss.item(), qf2_loss.item(), actor_loss.item(), alpha.item(), alpha_loss.item()

    # update the target network
    def _update_target_network(self, target, source):
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.data.copy_(self.args.tau * param.data + (1 - self.args.tau) * target_param.data)


def compute():
    torch.manual_seed(0)
    args = SimpleNamespace(hidden_size=16, log_std_min=-20, log_std_max=2, q_lr=3e-4, p_lr=3e-4, cuda=False,
                           reward_scale=1, gamma=0.99, tau=5e-3)
    obs_dim, act_dim, n = 5, 2, 8
    batches = [(torch.randn(n, obs_dim), torch.rand(n, act_dim) * 2 - 1, torch.randn(n), torch.randn(n, obs_dim),
                torch.zeros(n)) for _ in range(2)]
    agent = sac_agent(obs_dim, act_dim, args, batches)
    out = {}
    for it in range(2):
        agent._update_newtork(it)
        agent._update_target_network(agent.target_qf1, agent.qf1)
        agent._update_target_network(agent.target_qf2, agent.qf2)
        out.update({"it%d.actor.%s" % (it, k): p.grad.clone() for k, p in agent.actor_net.named_parameters()})
        out.update({"it%d.qf1.%s" % (it, k): p.grad.clone() for k, p in agent.qf1.named_parameters()})
    out.update({"final.actor." + k: p.detach().clone() for k, p in agent.actor_net.named_parameters()})
    out.update({"final.qf1." + k: p.detach().clone() for k, p in agent.qf1.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
