# source: https://github.com/watchernyu/REDQ/pull/2
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# REDQ (redq/algos/redq_sac.py, REDQSACAgent.train as released): the policy loss is built through the Q networks
# (`q_a_tilda = self.q_net_list[sample_idx](torch.cat([obs_tensor, a_tilda], 1))`), then the Q networks are updated
# (`q_loss_all.backward()` and every `q_optimizer.step()`), and only then `policy_loss.backward()` runs, through
# Q weights the steps have changed: RuntimeError with torch >= 1.5 ("modified by an inplace operation"). Merged PR #2
# (commits a60008c + 1647fef, "Refactor order of gradient computations and model updates" and "Fix policy gradient
# affecting Q networks"): call every backward first (Q nets' requires_grad_(False) while the policy loss goes through
# them), then all steps. Final parameters equal what the old order meant (policy gradient through the pre-step Q).
# Stand-ins: the replay buffer is one random batch (no numpy in this harness: `np.random.choice` of the min-subset is
# torch.randperm), Hopper sizes shrunk (obs 5, act 2, hidden (8, 8), num_Q 3), utd_ratio 2, logger calls dropped.
# redq/algos/core.py is the sibling module 704helpers_core.py (unchanged by the fix).
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn
import torch.optim as optim
from torch import Tensor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
core = import_module("704helpers_core")
TanhGaussianPolicy, Mlp = core.TanhGaussianPolicy, core.Mlp
soft_update_model1_with_model2 = core.soft_update_model1_with_model2


class REDQSACAgent(object):
    def __init__(self, obs_dim, act_dim, act_limit, device,
                 hidden_sizes=(8, 8), batch_size=16,
                 lr=3e-4, gamma=0.99, polyak=0.995,
                 alpha=0.2, auto_alpha=True, target_entropy=-1,
                 utd_ratio=2, num_Q=3, num_min=2, q_target_mode='min',
                 policy_update_delay=20,
                 ):
        # set up networks
        self.policy_net = TanhGaussianPolicy(obs_dim, act_dim, hidden_sizes, action_limit=act_limit).to(device)
        self.q_net_list, self.q_target_net_list = [], []
        for q_i in range(num_Q):
            new_q_net = Mlp(obs_dim + act_dim, 1, hidden_sizes).to(device)
            self.q_net_list.append(new_q_net)
            new_q_target_net = Mlp(obs_dim + act_dim, 1, hidden_sizes).to(device)
            new_q_target_net.load_state_dict(new_q_net.state_dict())
            self.q_target_net_list.append(new_q_target_net)
        # set up optimizers
        policy_optimizer = optim.Adam(self.policy_net.parameters(), lr=lr)
        self.policy_optimizer = optim.Adam(self.policy_net.parameters(), lr=lr)
        self.q_optimizer_list = []
        for q_i in range(num_Q):
            self.q_optimizer_list.append(optim.Adam(self.q_net_list[q_i].parameters(), lr=lr))
        # set up adaptive entropy (SAC adaptive)
        self.auto_alpha = auto_alpha
        if auto_alpha:
            self.target_entropy = target_entropy
            self.log_alpha = torch.zeros(1, requires_grad=True, device=device)
            self.alpha_optim = optim.Adam([self.log_alpha], lr=lr)
            self.alpha = self.log_alpha.cpu().exp().item()
        else:
            self.alpha = alpha
            self.target_entropy, self.log_alpha, self.alpha_optim = None, None, None
        self.mse_criterion = nn.MSELoss()

        self.obs_dim = obs_dim
        self.act_dim = act_dim
        self.gamma = gamma
        self.polyak = polyak
        self.batch_size = batch_size
        self.num_min = num_min
        self.num_Q = num_Q
        self.utd_ratio = utd_ratio
        self.q_target_mode = q_target_mode
        self.policy_update_delay = policy_update_delay
        self.device = device

    def sample_data(self, batch_size):
        # stand-in for the replay buffer: one random batch
        obs_tensor = torch.randn(batch_size, self.obs_dim)
        obs_next_tensor = torch.randn(batch_size, self.obs_dim)
        acts_tensor = torch.rand(batch_size, self.act_dim) * 2 - 1
        rews_tensor = torch.randn(batch_size).unsqueeze(1)
        done_tensor = (torch.rand(batch_size) < 0.1).float().unsqueeze(1)
        return obs_tensor, obs_next_tensor, acts_tensor, rews_tensor, done_tensor

    def get_redq_q_target_no_grad(self, obs_next_tensor, rews_tensor, done_tensor):
        # compute REDQ Q target, depending on the agent's Q target mode
        num_mins_to_use = self.num_min
        sample_idxs = torch.randperm(self.num_Q)[:num_mins_to_use].tolist()  # np.random.choice(..., replace=False)
        with torch.no_grad():
            if self.q_target_mode == 'min':
                """Q target is min of a subset of Q values"""
                a_tilda_next, _, _, log_prob_a_tilda_next, _, _ = self.policy_net.forward(obs_next_tensor)
                q_prediction_next_list = []
                for sample_idx in sample_idxs:
                    q_prediction_next = self.q_target_net_list[sample_idx](torch.cat([obs_next_tensor, a_tilda_next], 1))
                    q_prediction_next_list.append(q_prediction_next)
                q_prediction_next_cat = torch.cat(q_prediction_next_list, 1)
                min_q, min_indices = torch.min(q_prediction_next_cat, dim=1, keepdim=True)
                next_q_with_log_prob = min_q - self.alpha * log_prob_a_tilda_next
                y_q = rews_tensor + self.gamma * (1 - done_tensor) * next_q_with_log_prob
        return y_q, sample_idxs

    def train(self):
        num_update = self.utd_ratio
        for i_update in range(num_update):
            obs_tensor, obs_next_tensor, acts_tensor, rews_tensor, done_tensor = self.sample_data(self.batch_size)

            """Q loss"""
            y_q, sample_idxs = self.get_redq_q_target_no_grad(obs_next_tensor, rews_tensor, done_tensor)
            q_prediction_list = []
            for q_i in range(self.num_Q):
                q_prediction = self.q_net_list[q_i](torch.cat([obs_tensor, acts_tensor], 1))
                q_prediction_list.append(q_prediction)
            q_prediction_cat = torch.cat(q_prediction_list, dim=1)
            y_q = y_q.expand((-1, self.num_Q)) if y_q.shape[1] == 1 else y_q
            q_loss_all = self.mse_criterion(q_prediction_cat, y_q) * self.num_Q

            """policy and alpha loss"""
            if ((i_update + 1) % self.policy_update_delay == 0) or i_update == num_update - 1:
                # get policy loss
                a_tilda, mean_a_tilda, log_std_a_tilda, log_prob_a_tilda, _, pretanh = self.policy_net.forward(obs_tensor)
                q_a_tilda_list = []
                for sample_idx in range(self.num_Q):
                    q_a_tilda = self.q_net_list[sample_idx](torch.cat([obs_tensor, a_tilda], 1))
                    q_a_tilda_list.append(q_a_tilda)
                q_a_tilda_cat = torch.cat(q_a_tilda_list, 1)
                ave_q = torch.mean(q_a_tilda_cat, dim=1, keepdim=True)
                policy_loss = (self.alpha * log_prob_a_tilda - ave_q).mean()

                # get alpha loss
                if self.auto_alpha:
                    alpha_loss = -(self.log_alpha * (log_prob_a_tilda + self.target_entropy).detach()).mean()
                    self.alpha_optim.zero_grad()
                    alpha_loss.backward()
                    self.alpha_optim.step()
                    self.alpha = self.log_alpha.cpu().exp().item()
                else:
                    alpha_loss = Tensor([0])

            """update networks"""
            for q_i in range(self.num_Q):
                self.q_optimizer_list[q_i].zero_grad()
            q_loss_all.backward()
            for q_i in range(self.num_Q):
                self.q_optimizer_list[q_i].step()

            if ((i_update + 1) % self.policy_update_delay == 0) or i_update == num_update - 1:
                self.policy_optimizer.zero_grad()
                policy_loss.backward()
                self.policy_optimizer.step()

            # polyak averaged Q target networks
            for q_i in range(self.num_Q):
                soft_update_model1_with_model2(self.q_target_net_list[q_i], self.q_net_list[q_i], self.polyak)


def compute():
    torch.manual_seed(0)
    agent = REDQSACAgent(obs_dim=5, act_dim=2, act_limit=1.0, device=torch.device("cpu"))
    agent.train()
    out = {"policy." + n: p.detach().clone() for n, p in agent.policy_net.named_parameters()}
    for q_i in range(agent.num_Q):
        out.update({"q%d.%s" % (q_i, n): p.detach().clone() for n, p in agent.q_net_list[q_i].named_parameters()})
    out["log_alpha"] = agent.log_alpha.detach().clone()
    return out


if __name__ == "__main__":
    compute()
