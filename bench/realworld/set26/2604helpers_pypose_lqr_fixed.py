# FIXED copy (commit b6fa7572): the rollout feeds the system `current_xt`, the previous step's output, and only
# stores it into the buffer: `current_x[..., i+1, :] = current_xt = self.system(current_xt, current_u[..., i, :])[0]`.
# Written anew at small size after pypose/pypose at the parent of commit b6fa7572 ("fix inplace operation", June
# 2023): pypose/module/lqr.py (LQR: lqr_backward, lqr_forward), pypose/module/dynamics.py (System, NLS: forward,
# set_refpoint, the A / B linearisation by torch.autograd.functional.jacobian) and pypose/function/linalg.py
# (bmv, bvmv).
# The culprit, as in lqr.py's lqr_backward: when no nominal trajectory is given, the states are rolled out into a
# preallocated buffer with `current_x[..., i+1, :], _ = self.system(current_x[..., i, :], current_u[..., i, :])`:
# the system reads a view of the buffer (a nonlinear system saves it, e.g. the cart-pole's cos/sin of the angle)
# and the next assignment writes the same buffer, so the backward through the trajectory (lqr_forward reads
# `self.current_x` in `delta_xt = xt - self.current_x[..., t, :]`) fails with "modified by an inplace operation".
# lqr_forward already rolled out with a separate tensor (`x[..., t+1, :] = xt = self.system(xt, ut)[0]`).
# Stand-ins: no LTI / LTV classes (only the NLS path is used); the System time buffer and its forward hook are kept;
# the jacobian arguments are upstream's (vectorize, reverse mode, no create_graph).
import torch
from torch import nn
from torch.autograd.functional import jacobian


def bmv(mat, vec):
    return torch.matmul(mat, vec.unsqueeze(-1)).squeeze(-1)


def bvmv(lvec, mat, rvec):
    return torch.matmul(torch.matmul(lvec.unsqueeze(-2), mat), rvec.unsqueeze(-1)).squeeze(-1).squeeze(-1)


class System(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer('_t', torch.tensor(0, dtype=torch.int64))
        self.register_forward_hook(self.forward_hook)

    def forward_hook(self, module, inputs, outputs):
        self._t.add_(1)

    def reset(self, t=0):
        self._t.fill_(t)
        return self

    @property
    def systime(self):
        return self._t


class NLS(System):
    def __init__(self):
        super().__init__()
        self.jacargs = {'vectorize': True, 'strategy': 'reverse-mode'}

    def forward(self, state, input):
        self.state, self.input = torch.atleast_1d(state), torch.atleast_1d(input)
        state = self.state_transition(self.state, self.input, self.systime)
        obs = self.observation(self.state, self.input, self.systime)
        return state, obs

    def set_refpoint(self, state=None, input=None, t=None):
        self._ref_state = self.state if state is None else torch.atleast_1d(state)
        self._ref_input = self.input if input is None else torch.atleast_1d(input)
        self._ref_t = self.systime if t is None else torch.atleast_1d(t)
        self._ref_f = self.state_transition(self._ref_state, self._ref_input, self._ref_t)
        return self

    @property
    def A(self):
        func = lambda x: self.state_transition(x, self._ref_input, self._ref_t)
        return jacobian(func, self._ref_state, **self.jacargs)

    @property
    def B(self):
        func = lambda x: self.state_transition(self._ref_state, x, self._ref_t)
        return jacobian(func, self._ref_input, **self.jacargs)


class LQR(nn.Module):
    def __init__(self, system, Q, p, T):
        super().__init__()
        self.system = system
        self.Q, self.p, self.T = Q, p, T
        self.current_x = None
        self.current_u = None
        self.n_batch = self.p.shape[:-2]
        self.dargs = {'dtype': self.p.dtype, 'device': self.p.device}

    def forward(self, x_init, dt=1, current_x=None, current_u=None):
        K, k = self.lqr_backward(x_init, dt, current_x, current_u)
        x, u, cost = self.lqr_forward(x_init, K, k)
        return x, u, cost

    def lqr_backward(self, x_init, dt, current_x, current_u):
        ns, nsc = x_init.size(-1), self.p.size(-1)
        nc = nsc - ns

        if current_u is None:
            current_u = torch.zeros(self.n_batch + (self.T, nc), **self.dargs)

        if current_x is None:
            current_x = torch.zeros(self.n_batch + (self.T, ns), **self.dargs)
            current_x[..., 0, :] = x_init
            current_xt = x_init
            for i in range(self.T - 1):
                current_x[..., i + 1, :] = current_xt = self.system(current_xt, current_u[..., i, :])[0]

        self.current_x = current_x
        self.current_u = current_u

        K = torch.zeros(self.n_batch + (self.T, nc, ns), **self.dargs)
        k = torch.zeros(self.n_batch + (self.T, nc), **self.dargs)

        current_xut = torch.cat((current_x[..., :self.T, :], current_u), dim=-1)
        p = bmv(self.Q, current_xut) + self.p

        for t in range(self.T - 1, -1, -1):
            if t == self.T - 1:
                Qt = self.Q[..., t, :, :]
                qt = p[..., t, :]
            else:
                self.system.set_refpoint(state=current_x[..., t, :], input=current_u[..., t, :],
                                         t=torch.tensor(t * dt))
                A = self.system.A.squeeze(-2)
                B = self.system.B.squeeze(-1)
                F = torch.cat((A, B), dim=-1)
                Qt = self.Q[..., t, :, :] + F.mT @ V @ F
                qt = p[..., t, :] + bmv(F.mT, v)

            Qxx, Qxu = Qt[..., :ns, :ns], Qt[..., :ns, ns:]
            Qux, Quu = Qt[..., ns:, :ns], Qt[..., ns:, ns:]
            qx, qu = qt[..., :ns], qt[..., ns:]
            Quu_inv = torch.linalg.pinv(Quu)

            K[..., t, :, :] = Kt = - Quu_inv @ Qux
            k[..., t, :] = kt = - bmv(Quu_inv, qu)
            V = Qxx + Qxu @ Kt + Kt.mT @ Qux + Kt.mT @ Quu @ Kt
            v = qx + bmv(Qxu, kt) + bmv(Kt.mT, qu) + bmv(Kt.mT @ Quu, kt)

        return K, k

    def lqr_forward(self, x_init, K, k):
        ns, nc = self.current_x.size(-1), self.current_u.size(-1)
        u = torch.zeros(self.n_batch + (self.T, nc), **self.dargs)
        delta_u = torch.zeros(self.n_batch + (self.T, nc), **self.dargs)
        cost = torch.zeros(self.n_batch, **self.dargs)
        x = torch.zeros(self.n_batch + (self.T + 1, ns), **self.dargs)
        x[..., 0, :] = x_init
        xt = x_init

        for t in range(self.T):
            Kt, kt = K[..., t, :, :], k[..., t, :]
            delta_xt = xt - self.current_x[..., t, :]
            delta_u[..., t, :] = bmv(Kt, delta_xt) + kt
            u[..., t, :] = ut = delta_u[..., t, :] + self.current_u[..., t, :]
            xut = torch.cat((xt, ut), dim=-1)
            x[..., t + 1, :] = xt = self.system(xt, ut)[0]
            cost = cost + 0.5 * bvmv(xut, self.Q[..., t, :, :], xut) + (xut * self.p[..., t, :]).sum(-1)

        return x, u, cost
