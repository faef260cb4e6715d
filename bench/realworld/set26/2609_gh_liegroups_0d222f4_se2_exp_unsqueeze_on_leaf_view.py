# source: https://github.com/utiasSTARS/liegroups/commit/0d222f44e75ad32457152d9a53437ac4502d417b
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# liegroups (Lie groups SO(2), SE(2), SO(3), SE(3) in NumPy and PyTorch), liegroups/torch/se2.py: SE2Matrix.exp(xi)
# slices `rho = xi[:, 0:2]` and reshapes it in place for the batched product with the rotation Jacobian,
# `rho.unsqueeze_(dim=2)`, then `torch.bmm(rot_jac, rho).squeeze_()`. Optimising a batch of poses given as
# se(2) vectors (xi a leaf that requires grad) therefore raises "a view of a leaf Variable that requires grad is
# being used in an in-place operation" at the exponential map. Commit 0d222f4 "Changes for compatibility with
# PyTorch, removed in-place operations" rewrites every such reshape out of place (`rho = rho.unsqueeze(dim=2)`,
# `rot_jac = rot_jac.unsqueeze(dim=0)`, `.squeeze()`), in se2.py and so2.py among others.
# The library module is 2609helpers_liegroups_se2.py (ref: ..._fixed.py); its header names the stand-ins.
# The program (stand-in for a user's pose fit): 4 planar poses xi (leaf, requires grad, initialised small) map 5
# model points each; squared error to observed points; three SGD steps (lr 0.05). compute() returns the final
# poses, their last gradient and the last loss.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
lg = importlib.import_module("2609helpers_liegroups_se2")


def compute():
    torch.manual_seed(0)
    xi = (0.3 * torch.randn(4, 3)).requires_grad_()
    points = torch.randn(4, 5, 2)
    observed = torch.randn(4, 5, 2)
    optimizer = torch.optim.SGD([xi], lr=0.05)
    for _ in range(3):
        optimizer.zero_grad()
        T = lg.SE2Matrix.exp(xi)
        loss = ((T.dot(points) - observed) ** 2).mean()
        loss.backward()
        optimizer.step()
    return {"xi": xi.detach().clone(), "xi.grad": xi.grad.clone(), "loss": loss.detach()}


if __name__ == "__main__":
    compute()
