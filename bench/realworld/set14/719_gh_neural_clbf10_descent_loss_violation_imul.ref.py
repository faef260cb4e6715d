# reference fix for 719: merged PR #12 (commit 626cc1c): out-of-place masking and accumulation in descent_loss.
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class LinearSystem:
    # stand-in for the control-affine dynamics model (x_dot = A x + B u)
    def __init__(self, n_dims=2, n_controls=1, dt=0.01):
        self.n_dims = n_dims
        self.n_controls = n_controls
        self.dt = dt
        self.A = torch.tensor([[0.0, 1.0], [2.0, -0.5]])
        self.B = torch.tensor([[0.0], [1.0]])

    def closed_loop_dynamics(self, x, u, params=None):
        return x @ self.A.T + u @ self.B.T


class NeuralCLBFController(nn.Module):
    def __init__(self, dynamics_model, scenarios, clf_lambda=1.0, safe_level=1.0, controller_period=0.01,
                 barrier=True):
        super().__init__()
        self.dynamics_model = dynamics_model
        self.scenarios = scenarios
        self.n_scenarios = len(scenarios)
        self.clf_lambda = clf_lambda
        self.safe_level = safe_level
        self.controller_period = controller_period
        self.barrier = barrier
        self.V_nn = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        self.policy = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))

    def V(self, x):
        # stand-in for V_with_jacobian: 0.5 * ||V_nn(x)||^2
        return 0.5 * self.V_nn(x).pow(2).sum(dim=-1)

    def V_lie_derivatives(self, x):
        # stand-in: Lf_V, Lg_V of shape (batch, n_scenarios, 1) / (batch, n_scenarios, n_controls)
        with torch.enable_grad():
            x_ = x if x.requires_grad else x.clone().requires_grad_(True)
            gradV = torch.autograd.grad(self.V(x_).sum(), x_, create_graph=True)[0]
        f = x @ self.dynamics_model.A.T
        Lf_V = (gradV * f).sum(-1, keepdim=True).unsqueeze(1).expand(-1, self.n_scenarios, -1)
        Lg_V = (gradV @ self.dynamics_model.B).unsqueeze(1).expand(-1, self.n_scenarios, -1)
        return Lf_V, Lg_V

    def solve_CLF_QP(self, x, requires_grad=False):
        # stand-in for the differentiable CLF QP: control and relaxation from a policy network
        out = self.policy(x)
        u_qp = out[:, :1]
        qp_relaxation = F.softplus(out[:, 1:])
        return u_qp, qp_relaxation

    def descent_loss(
        self,
        x: torch.Tensor,
        goal_mask: torch.Tensor,
        safe_mask: torch.Tensor,
        unsafe_mask: torch.Tensor,
        accuracy: bool = False,
        requires_grad: bool = False,
    ) -> List[Tuple[str, torch.Tensor]]:
        # Compute loss to encourage satisfaction of the following conditions...
        loss = []

        # First figure out where this condition needs to hold
        eps = 0.1
        V = self.V(x)
        if self.barrier:
            condition_active = torch.sigmoid(10 * (self.safe_level + eps - V))
        else:
            condition_active = torch.tensor(1.0)

        # Get the control input and relaxation from solving the QP, and aggregate
        # the relaxation across scenarios
        u_qp, qp_relaxation = self.solve_CLF_QP(x, requires_grad=requires_grad)
        qp_relaxation = torch.mean(qp_relaxation, dim=-1)

        # Minimize the qp relaxation to encourage satisfying the decrease condition
        qp_relaxation_loss = (qp_relaxation * condition_active).mean()
        loss.append(("QP relaxation", qp_relaxation_loss))

        # Now compute the decrease using linearization
        eps = 1.0
        clbf_descent_term_lin = torch.tensor(0.0).type_as(x)
        clbf_descent_acc_lin = torch.tensor(0.0).type_as(x)
        # Get the current value of the CLBF and its Lie derivatives
        Lf_V, Lg_V = self.V_lie_derivatives(x)
        for i, s in enumerate(self.scenarios):
            # Use the dynamics to compute the derivative of V
            Vdot = Lf_V[:, i, :].unsqueeze(1) + torch.bmm(
                Lg_V[:, i, :].unsqueeze(1),
                u_qp.reshape(-1, self.dynamics_model.n_controls, 1),
            )
            Vdot = Vdot.reshape(V.shape)
            violation = F.relu(eps + Vdot + self.clf_lambda * V)
            violation = violation * condition_active
            clbf_descent_term_lin = clbf_descent_term_lin + violation.mean()
            clbf_descent_acc_lin = clbf_descent_acc_lin + (violation <= eps).sum() / (
                violation.nelement() * self.n_scenarios
            )

        loss.append(("CLBF descent term (linearized)", clbf_descent_term_lin))
        if accuracy:
            loss.append(("CLBF descent accuracy (linearized)", clbf_descent_acc_lin))

        # Now compute the decrease using simulation
        eps = 1.0
        clbf_descent_term_sim = torch.tensor(0.0).type_as(x)
        clbf_descent_acc_sim = torch.tensor(0.0).type_as(x)
        for s in self.scenarios:
            xdot = self.dynamics_model.closed_loop_dynamics(x, u_qp, params=s)
            x_next = x + self.dynamics_model.dt * xdot
            V_next = self.V(x_next)
            violation = F.relu(
                eps + (V_next - V) / self.controller_period + self.clf_lambda * V
            )
            violation = violation * condition_active

            clbf_descent_term_sim = clbf_descent_term_sim + violation.mean()
            clbf_descent_acc_sim = clbf_descent_acc_sim + (violation <= eps).sum() / (
                violation.nelement() * self.n_scenarios
            )
        loss.append(("CLBF descent term (simulated)", clbf_descent_term_sim))
        if accuracy:
            loss.append(("CLBF descent accuracy (simulated)", clbf_descent_acc_sim))

        return loss


def compute():
    torch.manual_seed(0)
    controller = NeuralCLBFController(LinearSystem(), scenarios=[{"m": 1.0}])
    x = torch.randn(16, 2) * 0.5
    masks = torch.zeros(16, dtype=torch.bool)
    losses = controller.descent_loss(x, masks, ~masks, masks, accuracy=True, requires_grad=True)
    total_loss = torch.tensor(0.0)
    for name, loss_value in losses:
        if "accuracy" not in name:
            total_loss = total_loss + loss_value
    total_loss.backward()
    return {n: p.grad for n, p in controller.named_parameters()}


if __name__ == "__main__":
    compute()
