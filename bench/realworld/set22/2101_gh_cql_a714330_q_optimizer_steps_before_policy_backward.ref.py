# reference fix for 2101: commit a714330 in the library module (2101helpers_cql_trainer_fixed.py): the policy
# update runs before the Q-function updates, and the CQL term's sampled policy actions are detached.
import copy
import importlib
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cql = importlib.import_module("2101helpers_cql_trainer_fixed")


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
