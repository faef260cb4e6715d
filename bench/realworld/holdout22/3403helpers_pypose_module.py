# Library module for case 3403 (shared by the original and the reference; the fix is in the case's own CartPole):
# pypose/pypose at the parent of 5b466f5 (PR #373), reduced into one file: bmv / bvmv (pypose/function/linalg.py,
# LieTensor branches left out), System / NLS, toBTN and runsys (pypose/module/dynamics.py), LQR (lqr.py, its
# u_lower / u_upper / du arguments kept but unused, as in the source at that commit) and MPC (mpc.py), docstrings
# left out. Stand-in: ReduceToBason (pypose/utils/stepper.py) is reduced to its step-count and tolerance rules.
import torch
from torch import nn
from torch.autograd.functional import jacobian
from torch.linalg import cholesky, vecdot


def bmv(mat, vec, *, out=None):
    assert mat.ndim >= 2 and vec.ndim >= 1, 'Input arguments invalid'
    assert mat.shape[-1] == vec.shape[-1], 'matrix-vector shape invalid'
    return torch.matmul(mat, vec.unsqueeze(-1), out=out).squeeze_(-1)


def bvmv(lvec, mat, rvec):
    assert mat.ndim >= 2 and lvec.ndim >= 1 and (rvec.ndim >= 1), 'Shape invalid'
    assert lvec.shape[-1] == mat.shape[-2] and mat.shape[-1] == rvec.shape[-1]
    lvec, rvec = (lvec.unsqueeze(-1), rvec.unsqueeze(-1))
    return torch.atleast_1d((lvec.mT @ mat @ rvec).squeeze_(-1).squeeze_(-1))


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

    def state_transition(self, state, input, t=None):
        raise NotImplementedError("The users need to define their own state transition method")

    def observation(self, state, input, t=None):
        raise NotImplementedError("The users need to define their own observation method")

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
        self._ref_g = self.observation(self._ref_state, self._ref_input, self._ref_t)
        return self

    @property
    def A(self):
        func = lambda x: self.state_transition(x, self._ref_input, self._ref_t)
        return jacobian(func, self._ref_state, **self.jacargs)

    @property
    def B(self):
        func = lambda x: self.state_transition(self._ref_state, x, self._ref_t)
        return jacobian(func, self._ref_input, **self.jacargs)


def toBTN(vec, T):
    if vec.ndim == 1:
        vec = vec.unsqueeze(0)
    if vec.ndim == 2:
        vec = vec.unsqueeze(0)
    if vec.shape[1] == 1:
        vec = vec.repeat(1, T, 1)
    return vec


def runsys(system: System, T, x_traj, u_traj):
    #make initial states trajectories if not given
    x_traj = toBTN(x_traj, T)
    u_traj = toBTN(u_traj, T)

    for i in range(T-1):
        x_traj[...,i+1,:], _ = system(x_traj[...,i,:], u_traj[...,i,:])

    return x_traj


class LQR(nn.Module):
    def __init__(self, system, Q, p, T):
        super().__init__()
        self.system = system
        self.Q, self.p, self.T = Q, p, T
        self.x_traj = None
        self.u_traj = None
        if self.Q.ndim == 3:
            self.Q = torch.tile(self.Q.unsqueeze(-3), (1, self.T, 1, 1))
        if self.p.ndim == 2:
            self.p = torch.tile(self.p.unsqueeze(-2), (1, self.T, 1))
        self.n_batch = self.p.shape[:-2]
        assert self.Q.shape[:-1] == self.p.shape, "Shape not compatible."
        self.dargs = {'dtype': self.p.dtype, 'device': self.p.device}

    def forward(self, x_init, dt=1, u_traj=None, u_lower=None, u_upper=None, du=None):
        K, k = self.lqr_backward(x_init, dt, u_traj, u_lower, u_upper, du)
        x, u, cost = self.lqr_forward(x_init, K, k, u_lower, u_upper, du)
        return x, u, cost

    def lqr_backward(self, x_init, dt, u_traj=None, u_lower=None, u_upper=None, du=None):
        ns, nsc = x_init.size(-1), self.p.size(-1)
        nc = nsc - ns
        if u_traj is None:
            self.u_traj = torch.zeros(self.n_batch + (self.T, nc), **self.dargs)
        else:
            self.u_traj = u_traj
        self.x_traj = x_init.unsqueeze(-2).repeat((1, self.T, 1))
        self.x_traj = runsys(self.system, self.T, self.x_traj, self.u_traj)

        K = torch.zeros(self.n_batch + (self.T, nc, ns), **self.dargs)
        k = torch.zeros(self.n_batch + (self.T, nc), **self.dargs)

        xut = torch.cat((self.x_traj[...,:self.T,:], self.u_traj), dim=-1)
        p = bmv(self.Q, xut) + self.p

        for t in range(self.T-1, -1, -1):
            if t == self.T - 1:
                Qt = self.Q[...,t,:,:]
                qt = p[...,t,:]
            else:
                self.system.set_refpoint(state=self.x_traj[...,t,:],
                                         input=self.u_traj[...,t,:],
                                         t=torch.tensor(t*dt))
                A = self.system.A.squeeze(-2)
                B = self.system.B.squeeze(-2)
                F = torch.cat((A, B), dim=-1)
                Qt = self.Q[...,t,:,:] + F.mT @ V @ F
                qt = p[...,t,:] + bmv(F.mT, v)

            Qxx, Qxu = Qt[..., :ns, :ns], Qt[..., :ns, ns:]
            Qux, Quu = Qt[..., ns:, :ns], Qt[..., ns:, ns:]
            qx, qu = qt[..., :ns], qt[..., ns:]

            L = cholesky(Quu)
            K[...,t,:,:] = Kt = -torch.cholesky_solve(Qux, L)
            k[...,t,:] = kt = -torch.cholesky_solve(qu.unsqueeze(-1), L).squeeze(-1)

            V = Qxx + Qxu @ Kt + Kt.mT @ Qux + Kt.mT @ Quu @ Kt
            v = qx  + bmv(Qxu, kt) + bmv(Kt.mT, qu) + bmv(Kt.mT @ Quu, kt)

        return K, k

    def lqr_forward(self, x_init, K, k, u_lower=None, u_upper=None, du=None):
        assert x_init.ndim == 2, "Shape not compatible."
        ns, nc = self.x_traj.size(-1), self.u_traj.size(-1)
        u = torch.zeros(self.n_batch + (self.T, nc), **self.dargs)
        delta_u = torch.zeros(self.n_batch + (self.T, nc), **self.dargs)
        cost = torch.zeros(self.n_batch, **self.dargs)
        x = torch.zeros(self.n_batch + (self.T+1, ns), **self.dargs)
        xt = x[..., 0, :] = x_init

        for t in range(self.T):
            Kt, kt = K[...,t,:,:], k[...,t,:]
            delta_xt = xt - self.x_traj[...,t,:]
            delta_u[..., t, :] = bmv(Kt, delta_xt) + kt
            u[...,t,:] = ut = delta_u[..., t, :] + self.u_traj[...,t,:]
            xut = torch.cat((xt, ut), dim=-1)
            x[...,t+1,:] = xt = self.system(xt, ut)[0]
            cost += 0.5 * bvmv(xut, self.Q[...,t,:,:], xut) + vecdot(xut, self.p[...,t,:])

        return x, u, cost


class ReduceToBason:
    """Stand-in for pypose.utils.ReduceToBason: stops after `steps` LQR iterations or when the cost is below tol."""

    def __init__(self, steps, tol=1e-5):
        self.max_steps, self.tol = steps, tol
        self.reset()

    def reset(self):
        self.steps, self._continual = 0, True

    def continual(self):
        return self._continual

    def step(self, loss):
        self.steps = self.steps + 1
        if torch.all(loss < self.tol) or self.steps >= self.max_steps:
            self._continual = False


class MPC(nn.Module):
    def __init__(self, system, Q, p, T, stepper=None):
        super().__init__()
        self.stepper = ReduceToBason(steps=10) if stepper is None else stepper
        self.stepper.max_steps -= 1
        self.lqr = LQR(system, Q, p, T)

    def forward(self, dt, x_init, u_init=None, u_lower=None, u_upper=None, du=None):
        x, u = None, u_init
        best = {'x': x, 'u': u, 'cost': None}
        self.stepper.reset()
        with torch.no_grad():
            while self.stepper.continual():
                x, u, cost = self.lqr(x_init, dt, u)
                self.stepper.step(cost)
                if best['cost'] == None or cost < best['cost']:
                    best = {'x': x, 'u': u, 'cost': cost}
        return self.lqr(x_init, dt, u_traj=best['u'])
