# source: https://github.com/pypose/pypose/commit/5b466f5013dbdf1516b20f096cda519a2f6c4762
# pattern: subscript_assign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# PyPose (pypose/pypose), PR #373 "Fixed mpc example bugs based on pr 369" (merged as 5b466f5; the PR's description:
# "Adding `.clone()` to the variable state in the state transition function to resolve variable state computational
# graph version conflicts during backpropagation in training"). The learning-MPC example's CartPole.state_transition
# unpacks the state by iterating it, `x, xDot, theta, thetaDot = state.squeeze()` (outputs of unbind, views of the
# state), and `thetaDot**2`, `torch.cos(theta)`, `torch.sin(theta)` save them. pypose's runsys passes the state as a
# view of the trajectory buffer, `x_traj[..., i+1, :], _ = system(x_traj[..., i, :], u_traj[..., i, :])`, so the next
# step's write into that buffer modifies the views' base; the training step's backward raises "Output 3 of Unbind is
# a view and its base or another view of its base has been modified inplace. This view is the output of a function
# that returns multiple views." The fix is in the example: `x, xDot, theta, thetaDot = state.clone().squeeze()` (the
# PR also clones the state in LTI.state_transition, a path this program does not take).
# Library module: 3403helpers_pypose_module.py (shared, unchanged by the fix): the source's bmv / bvmv, System / NLS,
# runsys, LQR and MPC; the stepper is a stand-in named there. The culprit is in this file (the example's CartPole).
# Stand-ins here: one step (not 500) of the example's training loop, with a fixed initial angle in place of the
# example's random one; the expert system's parameters and cost are the example's.
import importlib
import os
import sys

import torch
import torch.optim as optim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pp = importlib.import_module("3403helpers_pypose_module")


class CartPole(pp.NLS):
        def __init__(self, dt, length, cartmass, polemass, gravity):
            super().__init__()
            self.tau = dt
            self.length = length
            self.cartmass = cartmass
            self.polemass = polemass
            self.gravity = gravity
            self.poleml = self.polemass * self.length
            self.totalMass = self.cartmass + self.polemass

        def state_transition(self, state, input, t=None):
            x, xDot, theta, thetaDot = state.squeeze()
            force = input.squeeze()
            costheta = torch.cos(theta)
            sintheta = torch.sin(theta)

            temp = (force + self.poleml * thetaDot**2 * sintheta) / self.totalMass
            thetaAcc = (self.gravity * sintheta - costheta * temp) / \
                (self.length * (4.0 / 3.0 - self.polemass * costheta**2 / self.totalMass))
            xAcc = temp - self.poleml * thetaAcc * costheta / self.totalMass
            _dstate = torch.stack((xDot, xAcc, thetaDot, thetaAcc))
            return (state.squeeze() + torch.mul(_dstate, self.tau)).unsqueeze(0)

        def observation(self, state, input, t=None):
            return state


def compute():
    torch.manual_seed(0)
    n_batch, n_state, n_ctrl, T = 1, 4, 1, 5
    dt = 0.01
    g = 9.81
    time = torch.arange(0, T) * dt
    current_u = torch.sin(time).unsqueeze(1).unsqueeze(0)

    # expert
    exp = dict(
        Q=torch.tile(torch.eye(n_state + n_ctrl), (n_batch, T, 1, 1)),
        p=torch.tensor([[[0.1945, 0.2579, 0.1655, 1.0841, -0.6235],
                         [-0.3816, -0.4376, -0.7798, -0.3692, 1.4181],
                         [-0.4025, 1.0821, -0.0679, 0.5890, 1.1151],
                         [-0.0610, 0.0656, -1.0557, 0.8769, -0.5928],
                         [0.0123, 0.3731, -0.2426, -1.5464, 0.0056]]]),
        len=torch.tensor(1.5),
        m_cart=torch.tensor(20.0),
        m_pole=torch.tensor(10.0))

    len_ = torch.tensor(2.0).requires_grad_()
    m_pole = torch.tensor(11.1).requires_grad_()

    def get_loss(x_init, _len, _m_pole):
        # expert
        solver_exp = CartPole(dt, exp['len'], exp['m_cart'], exp['m_pole'], g)
        stepper_exp = pp.ReduceToBason(steps=15)
        mpc_expert = pp.MPC(solver_exp, exp['Q'], exp['p'], T, stepper=stepper_exp)
        x_true, u_true, cost_true = mpc_expert(dt, x_init, u_init=current_u)

        # agent
        solver_agt = CartPole(dt, _len, exp['m_cart'], _m_pole, g)
        stepper_agt = pp.ReduceToBason(steps=15)
        mpc_agt = pp.MPC(solver_agt, exp['Q'], exp['p'], T, stepper=stepper_agt)
        x_pred, u_pred, cost_pred = mpc_agt(dt, x_init, u_init=current_u)

        traj_loss = ((u_true - u_pred)**2).mean() + ((x_true - x_pred)**2).mean()
        return traj_loss

    opt = optim.RMSprop([len_, m_pole], lr=1e-2)
    x_init = torch.tensor([[0, 0, torch.pi + 0.05, 0]])
    traj_loss = get_loss(x_init, len_, m_pole)
    opt.zero_grad()
    traj_loss.backward()
    out = {"traj_loss": traj_loss.detach(), "len.grad": len_.grad.clone(), "m_pole.grad": m_pole.grad.clone()}
    opt.step()
    out["len.after"] = len_.detach().clone()
    out["m_pole.after"] = m_pole.detach().clone()
    return out


if __name__ == "__main__":
    compute()
