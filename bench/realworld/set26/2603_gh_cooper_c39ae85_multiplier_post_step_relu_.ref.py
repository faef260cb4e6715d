# reference fix for 2603: commit c39ae85 in the library module (2603helpers_cooper_multipliers_fixed.py):
# `self.weight.data = torch.relu(self.weight.data)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cooper = importlib.import_module("2603helpers_cooper_multipliers_fixed")


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
