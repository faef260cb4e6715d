# source: https://github.com/pypose/pypose/commit/b6fa7572e35ebda8d7da852a808ba48170287d93
# pattern: subscript_assign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# PyPose (robotics library), pypose/module/lqr.py: with no nominal trajectory given, LQR.lqr_backward rolls the
# states out into a preallocated buffer, `current_x[..., i+1, :], _ = self.system(current_x[..., i, :], ...)`; the
# system reads a view of the buffer (the cart-pole's state_transition unpacks it with
# `x, xDot, theta, thetaDot = state.squeeze()`, an unbind, and cos / sin / pow save those views) and the next
# assignment writes into the same buffer. lqr_forward then reads `self.current_x`, so learning the system's physical
# parameters through the LQR solution (as in the repository's MPC cart-pole example) fails at backward: on torch
# 2.13 with "Output 3 of Unbind is a view and its base or another view of its base has been modified inplace. This
# view is the output of a function that returns multiple views" (the saved unbind output is checked before the
# version counter), hence family C. Commit b6fa7572 "fix inplace operation" feeds the system the previous output
# and only stores it: `current_x[..., i+1, :] = current_xt = self.system(current_xt, current_u[..., i, :])[0]`
# (the same commit lets MPC with a single step reach this path with grad; the MPC change is not part of this case).
# The library module is 2604helpers_pypose_lqr.py (ref: ..._fixed.py); its header names the stand-ins.
# The program follows examples/module/mpc/cartpole.py of that commit, reduced: CartPole(NLS) with a learnable pole
# length (2.0) and pole mass (11.1) against the expert's 1.5 / 10.0, horizon T 5, batch 1, Q the identity, the
# example's cost vector p, current_u = sin(time); the expert's and the agent's LQR solutions are compared.
# Stand-ins: dt 0.1 (the example's 0.01 gives gradients near 1e-7 over five steps), x_init = (0, 0, pi + 0.3, 0.5)
# instead of a random 5-degree tilt, and the trajectory loss summed rather than averaged. compute() returns the
# parameters' gradients and the agent's solution.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
lqr = importlib.import_module("2604helpers_pypose_lqr")


class CartPole(lqr.NLS):
    def __init__(self, dt, length, cartmass, polemass, gravity):
        super().__init__()
        self.tau = dt
        self.length = length
        self.cartmass = cartmass
        self.polemass = polemass
        self.gravity = gravity
        self.polemassLength = self.polemass * self.length
        self.totalMass = self.cartmass + self.polemass

    def state_transition(self, state, input, t=None):
        x, xDot, theta, thetaDot = state.squeeze()
        force = input.squeeze()
        costheta = torch.cos(theta)
        sintheta = torch.sin(theta)
        temp = (force + self.polemassLength * thetaDot ** 2 * sintheta) / self.totalMass
        thetaAcc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.polemass * costheta ** 2 / self.totalMass))
        xAcc = temp - self.polemassLength * thetaAcc * costheta / self.totalMass
        _dstate = torch.stack((xDot, xAcc, thetaDot, thetaAcc))
        return (state.squeeze() + torch.mul(_dstate, self.tau)).unsqueeze(0)

    def observation(self, state, input, t=None):
        return state


def compute():
    torch.manual_seed(0)
    n_batch, n_state, n_ctrl, T = 1, 4, 1, 5
    dt, g = 0.1, 9.81
    time = torch.arange(0, T) * dt
    Q = torch.tile(torch.eye(n_state + n_ctrl), (n_batch, T, 1, 1))
    p = torch.tensor([[[0.1945, 0.2579, 0.1655, 1.0841, -0.6235],
                       [-0.3816, -0.4376, -0.7798, -0.3692, 1.4181],
                       [-0.4025, 1.0821, -0.0679, 0.5890, 1.1151],
                       [-0.0610, 0.0656, -1.0557, 0.8769, -0.5928],
                       [0.0123, 0.3731, -0.2426, -1.5464, 0.0056]]])
    current_u = torch.sin(time).unsqueeze(1).unsqueeze(0)
    length = torch.tensor(2.0).requires_grad_()
    m_pole = torch.tensor(11.1).requires_grad_()
    x_init = torch.tensor([[0.0, 0.0, torch.pi + 0.3, 0.5]])

    expert = CartPole(dt, torch.tensor(1.5), torch.tensor(20.0), torch.tensor(10.0), g)
    x_true, u_true, _ = lqr.LQR(expert, Q, p, T)(x_init, dt, current_u=current_u)
    agent = CartPole(dt, length, torch.tensor(20.0), m_pole, g)
    x_pred, u_pred, cost_pred = lqr.LQR(agent, Q, p, T)(x_init, dt, current_u=current_u)

    traj_loss = torch.sum((u_true - u_pred) ** 2) + torch.sum((x_true - x_pred) ** 2)
    traj_loss.backward()
    return {"length.grad": length.grad, "m_pole.grad": m_pole.grad,
            "x_pred": x_pred.detach(), "u_pred": u_pred.detach()}


if __name__ == "__main__":
    compute()
