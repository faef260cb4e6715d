# source: https://github.com/aviralkumar2907/CQL/commit/a7143301fb510b1a08f2603f10d5109c627a6ecf
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# CQL (conservative Q-learning for offline RL, built on rlkit's SAC), CQLTrainer.train_from_torch: the policy loss
# `(alpha*log_pi - q_new_actions).mean()` is built first, through both Q-functions (`torch.min(self.qf1(obs,
# new_obs_actions), self.qf2(obs, new_obs_actions))`); then the Q-losses are back-propagated and
# `self.qf1_optimizer.step()` / `self.qf2_optimizer.step()` (Adam) update qf1 / qf2's weights in place; only then
# `policy_loss.backward()` runs, through the Linear layers that saved those weights: "one of the variables needed for
# gradient computation has been modified by an inplace operation" on torch >= 1.5. Commit a714330 ("goa: torch 1.7
# compatible version") moves the policy update (zero_grad, backward, step) before the Q-function updates and detaches
# the actions `_get_policy_actions` returns, so the Q-losses (whose CQL term samples policy actions) no longer
# back-propagate into the policy after its step. Not a local rewrite: the fix reorders the updates.
# The library module is 2101helpers_cql_trainer.py (ref: ..._fixed.py); its header names its stand-ins.
# Harness (stand-ins): a HalfCheetah-like task (17 observations, 6 actions; an env stand-in with only
# action_space.shape), small networks (policy and Q-functions with two hidden layers of 32), a random batch of 16
# transitions instead of the D4RL replay buffer, num_random=4; two training steps, as the trainer runs them.
import copy
import importlib
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cql = importlib.import_module("2101helpers_cql_trainer")


def compute():
    torch.manual_seed(0)
    obs_dim, action_dim = 17, 6
    env = types.SimpleNamespace(action_space=types.SimpleNamespace(shape=(action_dim,)))  # stand-in for the gym env
    qf1 = cql.FlattenMlp([32, 32], output_size=1, input_size=obs_dim + action_dim)
    qf2 = cql.FlattenMlp([32, 32], output_size=1, input_size=obs_dim + action_dim)
    target_qf1 = copy.deepcopy(qf1)
    target_qf2 = copy.deepcopy(qf2)
    policy = cql.TanhGaussianPolicy([32, 32], obs_dim=obs_dim, action_dim=action_dim)
    trainer = cql.CQLTrainer(env=env, policy=policy, qf1=qf1, qf2=qf2, target_qf1=target_qf1,
                             target_qf2=target_qf2, policy_lr=1e-4, qf_lr=3e-4, num_random=4)
    for _ in range(2):
        batch = {
            'rewards': torch.randn(16, 1),
            'terminals': torch.zeros(16, 1),
            'observations': torch.randn(16, obs_dim),
            'actions': torch.rand(16, action_dim) * 2 - 1,
            'next_observations': torch.randn(16, obs_dim),
        }
        trainer.train_from_torch(batch)
    out = {"policy.%s.grad" % k: p.grad.clone() for k, p in policy.named_parameters()}
    for name, net in (("policy", policy), ("qf1", qf1), ("qf2", qf2), ("target_qf1", target_qf1),
                      ("target_qf2", target_qf2)):
        out.update({"%s.%s" % (name, k): p.detach().clone() for k, p in net.named_parameters()})
    out["log_alpha"] = trainer.log_alpha.detach().clone()
    return out


if __name__ == "__main__":
    compute()
