# reference fix for 3402: theseus commit 18575181 (PR #166) in the library module
# (3402helpers_theseus_nonlinear_optimizer_fixed.py): the batched data rebound with `torch.cat(...)`.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
core = importlib.import_module("3402helpers_theseus_core")
nlopt = importlib.import_module("3402helpers_theseus_nonlinear_optimizer_fixed")


def build_objective(measurements, batch_size, num_angles):
    objective = core.Objective()
    angles = []
    for k in range(num_angles):
        angle = core.Vector(torch.zeros(batch_size, 1), name=f"theta_{k}")
        target = core.Vector(measurements[:, k: k + 1], name=f"meas_{k}")
        objective.add(core.AngleCost(angle, target, core.ScaleCostWeight(1.0), name=f"angle_cost_{k}"),
                      batch_name="angle_costs")
        angles.append(angle)
    return objective, angles


def compute():
    torch.manual_seed(0)
    batch_size, num_angles = 2, 3
    features = torch.randn(batch_size, 4)
    gt_angles = torch.rand(batch_size, num_angles) * 1.5
    measurement_model = nn.Linear(4, num_angles)
    optimizer = torch.optim.Adam(measurement_model.parameters(), lr=1e-2)

    measurements = measurement_model(features)
    objective, angles = build_objective(measurements, batch_size, num_angles)
    nlopt.GaussNewton(objective, max_iterations=4).optimize()
    solution = torch.cat([a.data for a in angles], dim=1)
    loss = ((solution - gt_angles) ** 2).sum()
    optimizer.zero_grad()
    loss.backward()
    out = {
        "loss": loss.detach(),
        "solution": solution.detach(),
        "model.weight.grad": measurement_model.weight.grad.clone(),
        "model.bias.grad": measurement_model.bias.grad.clone(),
    }
    optimizer.step()
    out["model.weight.after"] = measurement_model.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
