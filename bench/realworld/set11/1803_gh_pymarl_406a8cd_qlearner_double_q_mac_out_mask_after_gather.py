# source: https://github.com/oxwhirl/pymarl/commit/406a8cd4bd69715bec879108e67db8797169de94
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# pymarl (cooperative multi-agent RL, SMAC), QLearner.train with double Q-learning: the live network's Q-values
# over the episode, `mac_out = th.stack(...)`, feed `th.gather(mac_out[:, :-1], dim=3, index=actions)` (GatherBackward
# saves mac_out), and are then masked in place to pick the greedy actions, `mac_out[avail_actions == 0] =
# -9999999`; the TD loss's backward fails with "modified by an inplace operation" on newer PyTorch. Commit 406a8cd
# "Fixing gradient computation error for newer versions of pytorch" masks a detached clone instead
# (`mac_out_detach = mac_out.clone().detach()`): the greedy actions are the same, only indices leave that branch.
# The library module is 1803helpers_pymarl_q_learner.py (ref: ..._fixed.py); its header names its stand-ins.
# Harness (stand-in): args as in pymarl's VDN config (double_q True, mixer "vdn", gamma 0.99, RMSprop lr 5e-4 alpha
# 0.99 eps 1e-5, grad_norm_clip 10, rnn_hidden_dim 16, obs_agent_id True, obs_last_action False) for 3 agents, 5
# actions, 6 observation features; an EpisodeBatch stand-in (a dict with batch_size, max_seq_length, device) of 2
# episodes of 5 steps with random observations, actions among the available ones, rewards, some unavailable actions,
# the last step terminated; one train() call; the agent's parameters after the RMSprop step are compared.
import importlib
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pymarl = importlib.import_module("1803helpers_pymarl_q_learner")


class EpisodeBatch(dict):
    """Stand-in for pymarl's EpisodeBatch: item access by field name, batch_size, max_seq_length, device."""

    def __init__(self, data, batch_size, max_seq_length):
        super().__init__(data)
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.device = "cpu"


def compute():
    torch.manual_seed(0)
    n_agents, n_actions, obs_dim, bs, T = 3, 5, 6, 2, 5
    args = types.SimpleNamespace(n_agents=n_agents, n_actions=n_actions, rnn_hidden_dim=16, agent_output_type="q",
                                 obs_last_action=False, obs_agent_id=True, mixer="vdn", double_q=True, gamma=0.99,
                                 lr=5e-4, optim_alpha=0.99, optim_eps=1e-5, grad_norm_clip=10)
    scheme = {"obs": {"vshape": obs_dim}, "actions_onehot": {"vshape": (n_actions,)}}
    mac = pymarl.BasicMAC(scheme, None, args)
    learner = pymarl.QLearner(mac, scheme, None, args)

    avail = (torch.rand(bs, T, n_agents, n_actions) > 0.3).long()
    avail[..., 0] = 1
    actions = torch.multinomial(avail.reshape(-1, n_actions).float(), 1).reshape(bs, T, n_agents, 1)
    terminated = torch.zeros(bs, T, 1, dtype=torch.uint8)
    terminated[:, T - 2] = 1
    batch = EpisodeBatch({
        "obs": torch.randn(bs, T, n_agents, obs_dim),
        "state": torch.randn(bs, T, n_agents * obs_dim),
        "actions": actions,
        "avail_actions": avail,
        "reward": torch.randn(bs, T, 1),
        "terminated": terminated,
        "filled": torch.ones(bs, T, 1, dtype=torch.long),
    }, bs, T)
    loss = learner.train(batch, t_env=0, episode_num=0)
    out = {"agent.%s" % k: p.detach().clone() for k, p in mac.agent.named_parameters()}
    out["loss"] = loss.detach()
    return out


if __name__ == "__main__":
    compute()
