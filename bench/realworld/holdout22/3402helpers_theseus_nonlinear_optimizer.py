# Library module for case 3402: facebookresearch/theseus theseus/optimizer/nonlinear/nonlinear_optimizer.py at the
# parent of 18575181 (PR #166, "Fix the in-place operation bug"): NonlinearOptimizer.retract_and_update_variables is
# the source's (its commented-out old loop left out). Stand-in: the optimization loop is reduced to Gauss-Newton
# steps with full unrolling (the source's _optimize_loop with truncated_grad_loop semantics: step size 1,
# force_update=True), the linear system built and solved densely by the core module's stand-in.
import importlib
import os
import sys
from typing import cast

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
core = importlib.import_module("3402helpers_theseus_core")
Variable = core.Variable


class GaussNewton:
    def __init__(self, objective, max_iterations: int = 4, step_size: float = 1.0):
        self.objective = objective
        self.max_iterations = max_iterations
        self.step_size = step_size

    def optimize(self):
        objective = self.objective
        objective.setup()
        converged_indices = torch.zeros(objective.batch_size, dtype=torch.bool)
        for _ in range(self.max_iterations):
            delta = core.dense_gauss_newton_delta(objective)
            self.retract_and_update_variables(delta, converged_indices, self.step_size, force_update=True)
        return objective

    # retracts all variables in the given order and updates their values
    # with the result
    def retract_and_update_variables(
        self,
        delta: torch.Tensor,
        converged_indices: torch.Tensor,
        step_size: float,
        force_update: bool = False,
    ):
        objective = self.objective

        var_idx = 0
        delta = step_size * delta

        # TODO: what does converged_indices do?
        for variable_batch, variables in self.objective.batched_optim_vars.values():
            cnts = variable_batch.dof() * len(variables)
            batch_pos = 0

            for variable in variables.values():
                variable_batch.data[
                    batch_pos : batch_pos + objective.batch_size
                ] = variable.data
                batch_pos += objective.batch_size

            delta_batch = torch.cat(
                [
                    delta[:, idx : idx + variable_batch.dof()]
                    for idx in range(var_idx, var_idx + cnts, variable_batch.dof())
                ],
                dim=0,
            )
            new_variable_batch = variable_batch.retract(delta_batch)

            batch_pos = 0

            for variable in variables.values():
                new_variable = new_variable_batch[
                    batch_pos : batch_pos + objective.batch_size
                ]

                if force_update:
                    variable.update(new_variable)
                else:
                    variable.update(new_variable, batch_ignore_mask=converged_indices)

                batch_pos += objective.batch_size

            var_idx += cnts

        # update batched cost functions
        # TODO: Implement FuncTorch
        for (
            batch_cost_function,
            cost_functions,
        ) in objective.batched_cost_functions.values():
            vars_attr_names = batch_cost_function._optim_vars_attr_names
            for var_attr_name in vars_attr_names:
                batch_variable = cast(
                    Variable, getattr(batch_cost_function, var_attr_name)
                )
                batch_pos = 0
                for cost_function in cost_functions:
                    fn_var = cast(Variable, getattr(cost_function, var_attr_name))
                    batch_variable.data[
                        batch_pos : batch_pos + objective.batch_size
                    ] = fn_var.data
                    batch_pos += objective.batch_size
