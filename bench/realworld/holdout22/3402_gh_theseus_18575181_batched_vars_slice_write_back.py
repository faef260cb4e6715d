# source: https://github.com/facebookresearch/theseus/commit/1857518193c3e4b02f38723d5388d50d4d793c8d
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Theseus (facebookresearch/theseus), PR #166 "Fix the in-place operation bug" (merged as 18575181, April 2022, while
# cost-function batching, `objective.add(..., use_batches=True)`, was being tried on the tactile pose estimation
# example). NonlinearOptimizer.retract_and_update_variables copies every variable back into the batched variables'
# data row block by row block, `variable_batch.data[batch_pos : batch_pos + objective.batch_size] = variable.data` and
# `batch_variable.data[...] = fn_var.data` for the batched cost functions. With full unrolling (the backward mode
# that differentiates through every Gauss-Newton step), the batched cost function of the previous step evaluated
# cos / sin of that same tensor, which autograd saved; the next step's block write bumps its version and the outer
# loss's backward fails (the tensor is "output 0 of CopySlices"). The fix rebinds the data out of place:
# `variable_batch.data = torch.cat([variable.data for variable in variables.values()], dim=0)` (and likewise for
# the cost functions' variables).
# Library modules: 3402helpers_theseus_nonlinear_optimizer.py (ref: ..._fixed.py), the source's
# retract_and_update_variables with a stand-in Gauss-Newton loop; 3402helpers_theseus_core.py (shared): the source's
# Variable.update and Objective batching, with stand-ins named there (Vector, AngleCost in place of the tactile
# example's SE2 costs, a dense Gauss-Newton solve). Stand-ins here: the outer problem (a linear "measurement model"
# predicts three angles per sample from features; theseus solves for the angles that fit the measurements through
# the unit-circle costs, batched; the outer loss compares the solution with ground-truth angles, as the tactile
# example's trainer compares estimated poses with ground truth) and one Adam step of the measurement model.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
core = importlib.import_module("3402helpers_theseus_core")
nlopt = importlib.import_module("3402helpers_theseus_nonlinear_optimizer")


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
