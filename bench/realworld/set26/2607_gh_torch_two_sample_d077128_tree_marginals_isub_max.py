# source: https://github.com/josipd/torch-two-sample/commit/d0771287fa1ba820ad975f1f038bfd8e155d2b91
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# torch-two-sample (differentiable two-sample tests, Djolonga & Krause 2017), torch_two_sample/inference_trees.py:
# TreeMarginals.__call__ stabilises the exponentials with `d -= d.max()`, where `d` is the upper-triangular part of
# `-alpha * distances`; the all-reduce max saved `d`, so using SmoothFRStatistic (the smoothed Friedman-Rafsky
# test) as an objective for training an implicit model fails at backward with "one of the variables needed for
# gradient computation has been modified by an inplace operation". Commit d077128 "remove inplace operations"
# writes `d = d - d.max()` (and `margs = margs / len(alphas)` in SmoothFRStatistic.__call__).
# The library module is 2607helpers_torch_two_sample.py (ref: ..._fixed.py); its header names the stand-ins.
# The program (stand-in for a user's implicit model): a linear generator maps noise to 5 points in 2-D, compared
# with 5 data points by SmoothFRStatistic(5, 5, compute_t_stat=True) at inverse temperatures [0.5, 1.0]; the
# statistic is the loss. compute() returns the generator's gradients and the statistic.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tts = importlib.import_module("2607helpers_torch_two_sample")


def compute():
    torch.manual_seed(0)
    generator = torch.nn.Linear(3, 2)
    noise = torch.randn(5, 3)
    data = torch.randn(5, 2) + torch.tensor([1.0, -0.5])
    fr_test = tts.SmoothFRStatistic(5, 5, compute_t_stat=True)
    statistic = fr_test(generator(noise), data, alphas=[0.5, 1.0])
    statistic.backward()
    return {"generator.weight.grad": generator.weight.grad, "generator.bias.grad": generator.bias.grad,
            "statistic": statistic.detach()}


if __name__ == "__main__":
    compute()
