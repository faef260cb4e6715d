# FIXED copy (commit c39ae85): `self.weight.data = torch.relu(self.weight.data)` in post_step.
# Written anew at small size after cooper-org/cooper at the parent of commit c39ae85 ("Fix inplace muktiplier
# positivity", February 2023, the library's 1.0 rewrite): cooper/multipliers/multipliers.py (ExplicitMultiplier,
# DenseMultiplier), cooper/constraints.py (ConstraintState, ConstraintGroup), cooper/formulation.py (the Lagrangian
# contributions), cooper/cmp.py (CMPState.populate_lagrangian / backward) and
# cooper/optim/constrained_optimizers/simultaneous_optimizer.py (step, dual_step).
# The culprit, as in multipliers.py: after each dual step, `ExplicitMultiplier.post_step` projects the multipliers
# of inequality constraints onto the non-negative orthant with `self.weight.relu_()`. `weight` is an
# nn.Parameter (a leaf that requires grad) and post_step runs with grad mode on (from the optimizer's step), so the
# first constrained step raises "a leaf Variable that requires grad is being used in an in-place operation".
# Stand-ins: only the "lagrangian" formulation, dense multipliers and the simultaneous optimizer are kept; no
# sparse / implicit multipliers, no augmented-Lagrangian scheduler, no state dicts; the ConstraintGroup builds its
# multiplier from `shape` as upstream does (zeros, enforce_positive for "ineq").
from dataclasses import dataclass
from typing import List, Optional

import torch


class ExplicitMultiplier(torch.nn.Module):
    def __init__(self, init: torch.Tensor, *, enforce_positive: bool = False, restart_on_feasible: bool = False):
        super().__init__()
        self.enforce_positive = enforce_positive
        self.restart_on_feasible = restart_on_feasible
        if self.enforce_positive and any(init < 0):
            raise ValueError("For inequality constraint, all entries in multiplier must be non-negative.")
        self.weight = torch.nn.Parameter(init)

    @property
    def implicit_constraint_type(self):
        return "ineq" if self.enforce_positive else "eq"

    def post_step(self, feasible_indices: Optional[torch.Tensor] = None, restart_value: float = 0.0):
        """Called after each step of the dual optimizer: keeps inequality multipliers non-negative and restarts
        the multipliers of feasible constraints if asked to."""
        if self.enforce_positive:
            # Ensures non-negativity for multipliers associated with inequality constraints.
            self.weight.data = torch.relu(self.weight.data)

        if self.restart_on_feasible and feasible_indices is not None:
            self.weight.data[feasible_indices, ...] = restart_value
            if self.weight.grad is not None:
                self.weight.grad[feasible_indices, ...] = 0.0


class DenseMultiplier(ExplicitMultiplier):
    def forward(self):
        return self.weight


@dataclass
class ConstraintState:
    violation: torch.Tensor
    strict_violation: Optional[torch.Tensor] = None


class ConstraintGroup:
    def __init__(self, constraint_type: str, shape: int):
        self.constraint_type = constraint_type
        self.multiplier = DenseMultiplier(init=torch.zeros(shape), enforce_positive=(constraint_type == "ineq"))
        self.state: Optional[ConstraintState] = None

    def compute_lagrangian_contribution(self):
        multiplier_value = self.multiplier()
        violation = self.state.violation
        strict_violation = self.state.strict_violation if self.state.strict_violation is not None else violation
        # formulation "lagrangian": the primal term does not differentiate the multiplier, the dual term only needs
        # the value of the violation
        primal_contribution = torch.sum(multiplier_value.detach() * violation)
        dual_contribution = torch.sum(multiplier_value * strict_violation.detach())
        return multiplier_value, primal_contribution, dual_contribution


class CMPState:
    def __init__(self, loss: torch.Tensor):
        self.loss = loss
        self._primal_lagrangian = None
        self._dual_lagrangian = None

    def populate_lagrangian(self, constraint_groups: List[ConstraintGroup]):
        primal_lagrangian = self.loss
        dual_lagrangian = 0.0
        for constraint_group in constraint_groups:
            _, primal_contribution, dual_contribution = constraint_group.compute_lagrangian_contribution()
            primal_lagrangian = primal_lagrangian + primal_contribution
            dual_lagrangian = dual_lagrangian + dual_contribution
        self._primal_lagrangian = primal_lagrangian
        self._dual_lagrangian = dual_lagrangian
        return self._primal_lagrangian

    def backward(self):
        self._primal_lagrangian.backward()
        self._dual_lagrangian.backward()


class SimultaneousConstrainedOptimizer:
    def __init__(self, constraint_groups, primal_optimizers, dual_optimizers):
        self.constraint_groups = list(constraint_groups)
        self.primal_optimizers = list(primal_optimizers)
        self.dual_optimizers = list(dual_optimizers)

    def zero_grad(self):
        for optimizer in self.primal_optimizers + self.dual_optimizers:
            optimizer.zero_grad()

    def step(self):
        for primal_optimizer in self.primal_optimizers:
            primal_optimizer.step()
        self.dual_step()

    def dual_step(self):
        for constraint, dual_optimizer in zip(self.constraint_groups, self.dual_optimizers):
            _multiplier = constraint.multiplier
            if _multiplier.weight.grad is not None:
                # Flip gradients for multipliers to perform ascent.
                _multiplier.weight.grad.mul_(-1.0)
                dual_optimizer.step()
                if _multiplier.implicit_constraint_type == "ineq":
                    # with the flipped sign, a feasible (negative) violation has a positive gradient
                    feasible_indices = _multiplier.weight.grad > 0.0
                else:
                    feasible_indices = None
                _multiplier.post_step(feasible_indices, restart_value=0.0)
