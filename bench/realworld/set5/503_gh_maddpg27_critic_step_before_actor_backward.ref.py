# reference fix for 503 (maintainer's answer in the issue): update the critic right after critic_loss, before the
# actor loss is computed, so the actor loss is differentiated through the updated critic.
import torch
import torch.nn as nn
import torch.nn.functional as F
from types import SimpleNamespace


# define the actor network
class Actor(nn.Module):
    def __init__(self, args, agent_id):
        super(Actor, self).__init__()
        self.max_action = args.high_action
        self.fc1 = nn.Linear(args.obs_shape[agent_id], 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 16)
        self.action_out = nn.Linear(16, args.action_shape[agent_id])

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = F.relu(self.fc3(x))
        actions = self.max_action * torch.tanh(self.action_out(x))

        return actions


class Critic(nn.Module):
    def __init__(self, args):
        super(Critic, self).__init__()
        self.max_action = args.high_action
        self.fc1 = nn.Linear(sum(args.obs_shape) + sum(args.action_shape), 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 16)
        self.q_out = nn.Linear(16, 1)

    def forward(self, state, action):
        state = torch.cat(state, dim=1)
        for i in range(len(action)):
            action[i] /= self.max_action
        action = torch.cat(action, dim=1)
        x = torch.cat([state, action], dim=1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = F.relu(self.fc3(x))
        q_value = self.q_out(x)
        return q_value


class MADDPG:
    def __init__(self, args, agent_id):
        self.args = args
        self.agent_id = agent_id
        self.train_step = 0

        # create the network
        self.actor_network = Actor(args, agent_id)
        self.critic_network = Critic(args)

        # build up the target network
        self.actor_target_network = Actor(args, agent_id)
        self.critic_target_network = Critic(args)

        # load the weights into the target networks
        self.actor_target_network.load_state_dict(self.actor_network.state_dict())
        self.critic_target_network.load_state_dict(self.critic_network.state_dict())

        # create the optimizer
        self.actor_optim = torch.optim.Adam(self.actor_network.parameters(), lr=self.args.lr_actor)
        self.critic_optim = torch.optim.Adam(self.critic_network.parameters(), lr=self.args.lr_critic)

    # soft update
    def _soft_update_target_network(self):
        for target_param, param in zip(self.actor_target_network.parameters(), self.actor_network.parameters()):
            target_param.data.copy_((1 - self.args.tau) * target_param.data + self.args.tau * param.data)

        for target_param, param in zip(self.critic_target_network.parameters(), self.critic_network.parameters()):
            target_param.data.copy_((1 - self.args.tau) * target_param.data + self.args.tau * param.data)

    # update the network
    def train(self, transitions, other_agents):
        for key in transitions.keys():
            transitions[key] = torch.tensor(transitions[key], dtype=torch.float32)
        r = transitions['r_%d' % self.agent_id]
        o, u, o_next = [], [], []
        for agent_id in range(self.args.n_agents):
            o.append(transitions['o_%d' % agent_id])
            u.append(transitions['u_%d' % agent_id])
            o_next.append(transitions['o_next_%d' % agent_id])

        # calculate the target Q value function
        u_next = []
        with torch.no_grad():
            index = 0
            for agent_id in range(self.args.n_agents):
                if agent_id == self.agent_id:
                    u_next.append(self.actor_target_network(o_next[agent_id]))
                else:
                    u_next.append(other_agents[index].policy.actor_target_network(o_next[agent_id]))
                    index += 1
            q_next = self.critic_target_network(o_next, u_next).detach()

            target_q = (r.unsqueeze(1) + self.args.gamma * q_next).detach()

        # the q loss
        q_value = self.critic_network(o, u)
        critic_loss = (target_q - q_value).pow(2).mean()
        # update the critic here, before the actor loss is built
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()

        # the actor loss
        u[self.agent_id] = self.actor_network(o[self.agent_id])
        actor_loss = - self.critic_network(o, u).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()

        self._soft_update_target_network()
        self.train_step += 1


class Agent:
    def __init__(self, args, agent_id):
        self.policy = MADDPG(args, agent_id)


def compute():
    torch.manual_seed(0)
    args = SimpleNamespace(n_agents=2, obs_shape=[4, 3], action_shape=[2, 2], high_action=1.0,
                           lr_actor=1e-3, lr_critic=1e-3, gamma=0.95, tau=0.01)
    agents = [Agent(args, i) for i in range(args.n_agents)]
    out = {}
    for step in range(2):
        transitions = {}
        for i in range(args.n_agents):
            transitions['o_%d' % i] = torch.randn(8, args.obs_shape[i]).tolist()
            transitions['u_%d' % i] = (torch.rand(8, args.action_shape[i]) * 2 - 1).tolist()
            transitions['r_%d' % i] = torch.randn(8).tolist()
            transitions['o_next_%d' % i] = torch.randn(8, args.obs_shape[i]).tolist()
        agent = agents[0]
        other_agents = agents[1:]
        agent.policy.train(transitions, other_agents)
        out.update({"step%d.actor.%s" % (step, n): p.grad.clone() for n, p in agent.policy.actor_network.named_parameters()})
        out.update({"step%d.critic.%s" % (step, n): p.grad.clone() for n, p in agent.policy.critic_network.named_parameters()})
    out.update({"final.actor." + n: p.detach().clone() for n, p in agents[0].policy.actor_network.named_parameters()})
    out.update({"final.critic." + n: p.detach().clone() for n, p in agents[0].policy.critic_network.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
