# source: https://github.com/cooper-org/cooper/commit/c39ae853eacc57b9852d09ea6c4adbbd0627b985
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Cooper (Lagrangian-based constrained optimization in PyTorch), during its 1.0 rewrite: after each dual step the
# SimultaneousConstrainedOptimizer calls `multiplier.post_step(...)`, and ExplicitMultiplier.post_step projects
# the Lagrange multipliers of inequality constraints onto the non-negative orthant with `self.weight.relu_()`.
# `weight` is an nn.Parameter and the projection runs with grad mode on, so the first step of any constrained
# problem with an inequality constraint raises "a leaf Variable that requires grad is being used in an in-place
# operation". Commit c39ae85 "Fix inplace muktiplier positivity" writes
# `self.weight.data = torch.relu(self.weight.data)` (the restart branch below it already wrote through `.data`).
# The library module is 2603helpers_cooper_multipliers.py (ref: ..._fixed.py); its header names the stand-ins.
# The program (stand-in for a user's constrained minimization problem): minimise ||x - a||^2 over a parameter x of
# size 4 subject to sum(x) <= 1 (one "ineq" constraint group of shape 1), primal SGD (lr 0.1) and dual SGD (lr 0.5),
# five simultaneous steps. compute() returns the final x, the multiplier and the last gradients.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cooper = importlib.import_module("2603helpers_cooper_multipliers")


def compute():
    torch.manual_seed(0)
    x = torch.nn.Parameter(torch.randn(4))
    a = 0.5 + torch.rand(4)
    constraint = cooper.ConstraintGroup(constraint_type="ineq", shape=1)
    primal_optimizer = torch.optim.SGD([x], lr=0.1)
    dual_optimizer = torch.optim.SGD(constraint.multiplier.parameters(), lr=0.5)
    optimizer = cooper.SimultaneousConstrainedOptimizer([constraint], [primal_optimizer], [dual_optimizer])
    for _ in range(5):
        optimizer.zero_grad()
        loss = ((x - a) ** 2).sum()
        constraint.state = cooper.ConstraintState(violation=(x.sum() - 1.0).reshape(1))
        cmp_state = cooper.CMPState(loss=loss)
        cmp_state.populate_lagrangian([constraint])
        cmp_state.backward()
        optimizer.step()
    return {"x": x.detach().clone(), "multiplier": constraint.multiplier.weight.detach().clone(),
            "x.grad": x.grad.clone(), "multiplier.grad": constraint.multiplier.weight.grad.clone()}


if __name__ == "__main__":
    compute()
