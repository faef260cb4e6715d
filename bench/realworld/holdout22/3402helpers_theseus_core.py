# Library module for case 3402 (shared by the original and the reference): facebookresearch/theseus at the parent of
# 18575181 (PR #166), reduced. Variable.update and Objective's batching (_update_batched_cost_functions,
# _update_batched_optim_variables, the batched loop of error()) follow theseus/core/variable.py and objective.py.
# Stand-ins: Vector (a plain Euclidean manifold: retract adds the step), AngleCost (a batched cost function on one
# angle variable with an analytic Jacobian, in place of the tactile example's SE2 costs; like them it evaluates
# cos / sin of its variable's data, which autograd saves), ScaleCostWeight, and the objective's bookkeeping
# (variables and batches are registered in add(); the source derives batch names from types and shapes).
from collections import OrderedDict
from typing import List, Optional, cast

import torch


class Variable:
    def __init__(self, data: torch.Tensor, name: str):
        self.data = data
        self.name = name

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    def copy(self, new_name: str):
        return self.__class__(self.data.clone(), name=new_name)

    def update(self, data, batch_ignore_mask: Optional[torch.Tensor] = None, keep_batch: bool = False):
        if isinstance(data, Variable):
            data = data.data
        if len(data.shape) != len(self.data.shape) or data.shape[1:] != self.data.shape[1:]:
            raise ValueError(f"Tried to update tensor {self.name} with data incompatible with original tensor shape.")
        if keep_batch and self.data.shape[0] != data.shape[0]:
            raise ValueError(f"Tried to update tensor {self.name} with data of another batch size.")
        if data.dtype != self.dtype:
            raise ValueError(f"Tried to update used tensor of dtype {data.dtype} but Variable {self.name} "
                             f"has dtype {self.dtype}.")
        if batch_ignore_mask is not None and batch_ignore_mask.any():
            mask_shape = (-1,) + (1,) * (data.ndim - 1)
            self.data = torch.where(batch_ignore_mask.view(mask_shape), self.data, data)
        else:
            self.data = data


class Vector(Variable):
    """Stand-in manifold: Euclidean vectors of shape (batch, dof)."""

    def dof(self) -> int:
        return self.data.shape[1]

    def retract(self, delta: torch.Tensor) -> "Vector":
        return Vector(self.data + delta, name=self.name + "__retracted")

    def __getitem__(self, item):
        return Vector(self.data[item], name=self.name + "__slice")


class ScaleCostWeight:
    def __init__(self, scale: float):
        self.scale = scale

    def weight_error(self, error):
        return error * self.scale

    def weight_jacobians_and_error(self, jacobians, error):
        return [j * self.scale for j in jacobians], error * self.scale


class AngleCost:
    """Stand-in cost function: a unit-circle residual between an angle variable and a measured angle."""

    _optim_vars_attr_names = ["angle"]
    _aux_vars_attr_names = ["target"]

    def __init__(self, angle: Vector, target: Vector, weight: ScaleCostWeight, name: str):
        self.angle = angle
        self.target = target
        self.weight = weight
        self.name = name

    def dim(self) -> int:
        return 2

    def copy(self, new_name: str) -> "AngleCost":
        return AngleCost(self.angle.copy(new_name + "__angle"), self.target.copy(new_name + "__target"),
                         self.weight, new_name)

    def error(self) -> torch.Tensor:
        a, t = self.angle.data, self.target.data
        return torch.cat([torch.cos(a) - torch.cos(t), torch.sin(a) - torch.sin(t)], dim=1)

    def jacobians(self):
        a = self.angle.data
        return [torch.stack([-torch.sin(a), torch.cos(a)], dim=1)], self.error()  # (batch, 2, 1)

    def weight_error(self, error):
        return self.weight.weight_error(error)


class Objective:
    def __init__(self):
        self.optim_vars: "OrderedDict[str, Vector]" = OrderedDict()
        self.batched_cost_functions = OrderedDict()
        self.batched_optim_vars = OrderedDict()
        self._batch_size = None

    @property
    def batch_size(self) -> int:
        return self._batch_size

    def add(self, cost_function: AngleCost, batch_name: str = "angle_costs"):
        var = cost_function.angle
        if batch_name not in self.batched_optim_vars:
            self.batched_optim_vars[batch_name] = (var.copy(batch_name + "__varialbe_batch"), OrderedDict())
        self.batched_optim_vars[batch_name][1][var.name] = var
        self.optim_vars[var.name] = var
        if batch_name not in self.batched_cost_functions:
            self.batched_cost_functions[batch_name] = (cost_function.copy(batch_name + "__cost_function_batch"), [])
        self.batched_cost_functions[batch_name][1].append(cost_function)

    def dim(self) -> int:
        return sum(cf.dim() for _, cfs in self.batched_cost_functions.values() for cf in cfs)

    def _update_batched_cost_functions(self):
        for batch_name, (cost_function_batch, cost_functions) in self.batched_cost_functions.items():
            vars_attr_name_lists = [cost_function_batch._optim_vars_attr_names,
                                    cost_function_batch._aux_vars_attr_names]
            for vars_attr_names in vars_attr_name_lists:
                for var_attr_name in vars_attr_names:
                    variable_batch = cast(Variable, getattr(cost_function_batch, var_attr_name))
                    original_variable = cast(Variable, getattr(cost_functions[0], var_attr_name))
                    batch_shape = [self.batch_size] + list(original_variable.shape[1:])
                    variable_batch_data = [
                        cast(Variable, getattr(cost_function, var_attr_name)).data.expand(batch_shape)
                        for cost_function in cost_functions
                    ]
                    variable_batch.data = torch.cat(variable_batch_data, dim=0)

    def _update_batched_optim_variables(self):
        for batch_name, (variable_batch, variables) in self.batched_optim_vars.items():
            variable_batch_data = [variable.data for variable in variables.values()]
            variable_batch.data = torch.cat(variable_batch_data, dim=0)

    def setup(self):
        self._batch_size = next(iter(self.optim_vars.values())).shape[0]
        with torch.enable_grad():
            self._update_batched_cost_functions()
            self._update_batched_optim_variables()

    def error(self) -> torch.Tensor:
        error_vector = torch.zeros(self.batch_size, self.dim())
        pos = 0
        for cost_function_batch, cost_functions in self.batched_cost_functions.values():
            batch_errors = cost_function_batch.error()
            batch_pos = 0
            for cost_function in cost_functions:
                weighted_error = cost_function.weight_error(batch_errors[batch_pos: batch_pos + self.batch_size])
                error_vector[:, pos: pos + cost_function.dim()] = weighted_error
                batch_pos += self.batch_size
                pos += cost_function.dim()
        return error_vector

    def objective_value(self) -> torch.Tensor:
        return (self.error() ** 2).sum(dim=1)


def dense_gauss_newton_delta(objective: Objective) -> torch.Tensor:
    """Stand-in for the DenseLinearization + CholeskyDenseSolver: solves (J^T J) delta = -J^T e, with the
    variables ordered as the batched optimization variables are (one scalar variable per cost function)."""
    bs = objective.batch_size
    n_vars = len(objective.optim_vars)
    blocks: List[torch.Tensor] = []
    errs: List[torch.Tensor] = []
    col = 0
    for cost_function_batch, cost_functions in objective.batched_cost_functions.values():
        (jac,), err = cost_function_batch.jacobians()
        batch_pos = 0
        for cost_function in cost_functions:
            j, e = cost_function.weight.weight_jacobians_and_error(
                [jac[batch_pos: batch_pos + bs]], err[batch_pos: batch_pos + bs])
            row = torch.zeros(bs, cost_function.dim(), n_vars)
            row[:, :, col: col + 1] = j[0]
            blocks.append(row)
            errs.append(e)
            batch_pos += bs
            col += 1
    J = torch.cat(blocks, dim=1)
    e = torch.cat(errs, dim=1).unsqueeze(-1)
    A = J.transpose(1, 2) @ J + 1e-6 * torch.eye(n_vars)
    b = -(J.transpose(1, 2) @ e)
    return torch.linalg.solve(A, b).squeeze(-1)
