# reference fix for 1203: commit 07e14442e (PR #3344) in the library module (1203helpers_monai_dints_fixed.py): the
# division out of place.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
dints = importlib.import_module("1203helpers_monai_dints_fixed")


def compute():
    torch.manual_seed(0)
    dints_space = dints.TopologySearch(num_blocks=3, num_depths=2)
    probs_a, arch_code_prob_a = dints_space.get_prob_a(child=True)
    entropy_alpha_c = -(probs_a * torch.log(probs_a + 1e-5)).mean()
    entropy_alpha_a = -(arch_code_prob_a * torch.log(arch_code_prob_a + 1e-5)).mean()
    loss = 0.001 * (entropy_alpha_a + entropy_alpha_c)
    loss.backward()
    return {"log_alpha_a.grad": dints_space.log_alpha_a.grad, "probs_a": probs_a.detach()}


if __name__ == "__main__":
    compute()
