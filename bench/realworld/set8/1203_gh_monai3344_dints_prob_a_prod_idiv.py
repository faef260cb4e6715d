# source: https://github.com/Project-MONAI/MONAI/pull/3344
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# MONAI, monai/networks/nets/dints.py (DiNTS, differentiable neural network topology search for 3D medical image
# segmentation), TopologySearch.get_prob_a(child=True): the probability of each child network is a product over its
# paths, `_prob = (path_activation * arch_prob + (1 - path_activation) * (1 - arch_prob)).prod(-1)`, renormalised in
# place, `_prob /= norm[blk_idx]`; ProdBackward saves its result, so the search loss that differentiates the child
# probabilities (the architecture-entropy term) fails with "modified by an inplace operation". Commit 07e14442e
# "inplace grads" in PR #3344 "add dints model" (merged): `probs_a = [(...).prod(-1) / norm[blk_idx] for blk_idx in
# range(self.num_blocks)]`.
# The library module is 1203helpers_monai_dints.py (ref: 1203helpers_monai_dints_fixed.py).
# Stand-ins: TopologySearch reduced to the architecture weights (see the helper), 3 blocks of 2 depths (4 paths, 15
# children); the loss is the search step's entropy regulariser on the child and path probabilities, as in MONAI's
# DiNTS search tutorial, `-(probs_a * torch.log(probs_a + 1e-5)).mean()` plus the same on `arch_code_prob_a`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
dints = importlib.import_module("1203helpers_monai_dints")


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
