"""buctoolkit 1.0b5 (`BUCToolkit`): the proven findings of `inplacefix check` (stop 55, fresh55, end of stop) that
this driver decides. Functions are compiled alone from the shipped files (the package needs Python 3.12 for other
files, and joblib, so it is not imported), with the index helpers `index_inner_product` and `index_reduce` from the
shipped utils/index_ops.py.

- BatchOptim/minimize/CG.py:108, :136, :160, :184 (`CG.__PRP_irreg`, `__PRP_reg`, `__FR_irreg`, `__FR_reg`):
  `beta.masked_fill_(is_restart, 0.)` writes `beta`, which `__check_restart`'s `beta * gp` saved (for gp's
  gradient). But that product feeds only a comparison: `__check_restart` returns `ortho_check | ((-gg + beta * gp)
  >= 0.)`, a bool, so no backward ever reaches the product's node (comparison-only-saver, through a helper of the
  same class). Moreover the next statement that uses beta is `th.addcmul(-g, beta, p, out=p)`, an `out=` call that
  refuses operands that require grad ("functions with out=... arguments don't support automatic
  differentiation"): with grad the function raises that error in the forward before it hands anything back.
  Without grad nothing is saved (the library runs its optimisers under `th.no_grad()`). False. Context: stopped
  right before the `out=` call with beta handed back and differentiated, it runs too (the saver is dead); with
  `__check_restart` also handing its product back into the loss (the probe's control), it would raise.
"""

import _shim  # noqa: F401
import ast
import linecache
import re
import time
import types

import numpy as np

import torch
import torch as th
from _check import attempt
from _fresh53 import compile_alone, src

CG = src("BUCToolkit/BatchOptim/minimize/CG.py")
OPS = src("BUCToolkit/utils/index_ops.py")
OUTS = {108: 114, 136: 141, 160: 165, 184: 188}  # masked_fill_ line: its addcmul(..., out=p) line
for n, o in OUTS.items():
    assert linecache.getline(CG, n).strip().startswith("beta.masked_fill_(is_restart, 0.)"), n
    assert linecache.getline(CG, o).strip().startswith("th.addcmul(-g, beta, p, out=p)"), o
NAMES = {108: "__PRP_irreg", 136: "__PRP_reg", 160: "__FR_irreg", 184: "__FR_reg"}


def cg(line, stop=False, control=False, grad=True):
    ops = compile_alone(OPS, {"index_inner_product", "index_reduce"}, {"th": th, "torch": torch})
    replace = {}
    if stop:
        replace[OUTS[line]] = "return beta"
    if control:
        replace[line] = "beta = beta.masked_fill(is_restart, 0.)"
    ns = compile_alone(CG, {f"CG.{NAMES[line]}", "CG.__check_restart"},
                       {"th": th, "index_inner_product": ops["index_inner_product"]}, replace=replace)
    irregular = line in (108, 160)

    def go():
        me = types.SimpleNamespace(MIN_CACHE=th.scalar_tensor(1e-20), verbose=0)
        setattr(me, "__check_restart", ns["__check_restart"])
        if irregular:  # (1, sumN, 3), atoms of 2 structures
            shape, idx = (1, 5, 3), th.tensor([0, 0, 0, 1, 1])
        else:
            shape, idx = (2, 4, 3), None
        g = th.randn(shape, requires_grad=grad)
        g_old = th.randn(shape, requires_grad=grad)
        p = -g_old.detach().clone().requires_grad_(grad)
        out = ns[NAMES[line]](me, g, g_old, p, None, idx)
        if out.requires_grad:
            out.sum().backward()
    return go


for n in OUTS:
    FID = f"BUCToolkit/BatchOptim/minimize/CG.py:{n}:IPF103"
    attempt(FID, "path", f"{NAMES[n]} on gradients and a direction that require grad, grad on: the out= addcmul "
            "refuses them in the forward (RuntimeError), nothing reaches a backward", cg(n), expected=(RuntimeError,))
    attempt(FID, "path", f"{NAMES[n]} without grad (as CG runs it, under no_grad): runs", cg(n, grad=False))
    attempt(FID, "path", "stopped before the out= call, beta handed back and differentiated: runs (the product "
            "that saved beta only feeds a comparison)", cg(n, stop=True))


# --- the `_hold_samples` scatter-back methods (index_copy_ of a working tensor into its full-batch owner):
# Dimer.py:421-424, Krylov.py:361-363 (`_KrylovBase._update_eigen_batches`), :924 (`KrylovNewton`), :1235-1238
# (`KrylovDynamics`), FIRE.py:261, :263. Each is `if self._hold_samples: self.x = self._x` / `else:
# self.x.index_copy_(d, idx, self._x)`. index_copy_ saves its source (`self._x`) and writes the owner `self.x`; the
# two are one tensor only when an earlier call took the hold branch (`self.x = self._x`) and the flag then changed
# with the working tensor not rebound. In the library `_hold_samples` is fixed for an optimiser's run and each
# iteration rebinds the working tensors before this method; and in that one aliasing order index_copy_ refuses to
# copy a tensor into itself in the forward ("some elements of the input tensor and the written-to tensor refer to a
# single memory location"), so the autograd error cannot come either: false (flag-exclusive-alias).
DIMER = src("BUCToolkit/BatchOptim/TS/Dimer.py")
KRY = src("BUCToolkit/BatchOptim/TS/Krylov.py")
FIRE = src("BUCToolkit/BatchOptim/minimize/FIRE.py")

# (file, class, {line: (owner, working, dim, short)})  short: indexed by structure (select_indices_short)
SCATTER = [
    (DIMER, "Dimer", {421: ("v", "_v", 1, False), 422: ("Hv", "_Hv", 1, False), 423: ("vHv", "_vHv", 1, True),
                      424: ("_extra_converge_mask", "_local_extra_converge_mask", 0, True)}),
    (KRY, "_KrylovBase", {361: ("eigenval", "_eigenval", 0, True), 362: ("eigenvec", "_eigenvec", 1, False),
                          363: ("_extra_converge_mask", "_local_extra_converge_mask", 0, True)}),
    (KRY, "KrylovNewton", {924: ("delta2", "_delta2", 0, True)}),
    (KRY, "KrylovDynamics", {1235: ("t", "_t", 1, False), 1236: ("a", "_a", 1, False),
                             1237: ("n_count", "_n_count", 1, False), 1238: ("veloc", "_veloc", 1, False)}),
    (FIRE, "FIRE", {261: ("v", "v_", 1, False), 263: ("v", "v_", 0, False)}),
]
for path, cls, lines in SCATTER:
    for n, (owner, working, dim, short) in lines.items():
        text = linecache.getline(path, n).strip()
        assert text.startswith(f"self.{owner}.index_copy_("), (n, text)

N_ATOMS, N_STRUCT = 6, 3
SEL = th.tensor([0, 2, 5])        # active atoms
SEL_SHORT = th.tensor([0, 2])     # active structures


def make_working(me, lines, leaf, regular):
    for owner, working, dim, short in lines.values():
        k = len(SEL_SHORT if short or regular else SEL)
        shape = [1, 1, 1]
        shape[dim] = k
        if "mask" in working:
            setattr(me, working, th.rand(k) > 0.5)
        elif regular:  # FIRE's regular layout: (B, N, D) rows
            setattr(me, working, leaf[:k].reshape(k, 1, 1) * 2.0)
        else:
            setattr(me, working, (leaf[:k] * 2.0).reshape(shape))


def make_owners(me, lines, regular):
    for owner, working, dim, short in lines.values():
        k = N_STRUCT if short or regular else N_ATOMS
        shape = [1, 1, 1]
        shape[dim] = k
        setattr(me, owner, th.zeros(k, dtype=th.bool) if "mask" in owner else
                (th.zeros(k, 1, 1) if regular else th.zeros(shape)))


def scatter(path, cls, lines, order, rebind=True):
    names = {f"{cls}._update_algo_batches"} if cls != "_KrylovBase" else {"_KrylovBase._update_eigen_batches"}
    ns = compile_alone(path, names, {"th": th})
    fn = ns["_update_eigen_batches" if cls == "_KrylovBase" else "_update_algo_batches"]
    regular = 263 in lines

    def go():
        leaf = th.rand(N_ATOMS, requires_grad=True)
        me = types.SimpleNamespace(is_concat_X=not regular)
        if cls in ("KrylovNewton", "KrylovDynamics"):  # they first call _update_eigen_batches (checked above)
            me._update_eigen_batches = lambda a, b: None
        make_owners(me, lines, regular)
        for step, hold in enumerate(order):
            me._hold_samples = hold
            if step == 0 or rebind:
                make_working(me, lines, leaf, regular)
            fn(me, SEL if not regular else SEL_SHORT, SEL_SHORT)
        loss = sum(getattr(me, o).float().sum() for o, w, d, s in lines.values() if "mask" not in o)
        loss.backward()
    return go


for path, cls, lines in SCATTER:
    where = path.split("BUCToolkit/", 1)[1]
    for n in lines:
        FID = f"BUCToolkit/{where}:{n}:IPF103"
        sub = {n: lines[n]} if n in (261, 263) else lines
        attempt(FID, "path", f"{cls} scatter-back without hold, working tensors that require grad, then backward of "
                "the owners: runs", scatter(path, cls, sub, [False]))
        attempt(FID, "path", "two iterations without hold, the working tensors rebound each time (the library's "
                "flow): runs", scatter(path, cls, sub, [False, False]))
        attempt(FID, "path", "with hold (the owners rebound to the working tensors, no write): runs",
                scatter(path, cls, sub, [True]))
        attempt(FID, "path", "hold, then the flag cleared with the working tensors not rebound (owner and source "
                "one tensor, the only aliasing order): index_copy_ refuses the overlap in the forward (RuntimeError)",
                scatter(path, cls, sub, [True, False], rebind=False), expected=(RuntimeError,))


# --- FIRE.py:163, :164, :175 (`FIRE._update_algo_param`, the concatenated layout): `self.v_.mul_(1. - a_)`,
# `self.v_.addcmul_(a_, F_hat)` and `self.v_.masked_fill_(is_p_lt_0, 0.)` write the working velocity, which
# `index_inner_product(self.v_, self.v_, ...)` (its `u * v`, index_ops.py:111) saved for |v|, and |v| reaches the
# velocity through `F_hat.mul_(v_norm)` and :164. A velocity that requires grad (the optimiser's state; FIRE runs
# under no_grad) makes backward of the updated velocity raise: real by this file's convention (optimiser state that
# requires grad, as nadir's Adadelta). :163 is isolated with :164 out of place (the velocity rebound) and :175
# through .data; :164 with :163 and :175 through .data; their controls make the line out of place. :175 cannot be
# isolated: with :164 in place, :164 raises first; with :164 out of place, :175 writes the rebound velocity, which
# nothing saved. So :175 is real only in this file's "not isolated" sense (as torch-world :157 and :163). (The
# gradient alone requiring grad does not raise: `F * self.v_` saves v_ only for `momenta`, which feeds comparisons.)
FIRE_LINES = {163: "self.v_.mul_((1. - a_))", 164: "self.v_.addcmul_(a_, F_hat)", 175: "self.v_.masked_fill_("}
for n, text in FIRE_LINES.items():
    assert linecache.getline(FIRE, n).strip() == text, n
DATA = {163: "self.v_.data.mul_((1. - a_))", 164: "self.v_.data.addcmul_(a_, F_hat)",
        175: "self.v_.data.masked_fill_(is_p_lt_0, 0.)"}
OOP = {163: "self.v_ = self.v_.mul((1. - a_))", 164: "self.v_ = self.v_.addcmul(a_, F_hat)",
       175: "self.v_ = self.v_.masked_fill(is_p_lt_0, 0.)"}
FIRE_RUNS = {
    163: ({164: OOP[164], 175: DATA[175]}, {163: OOP[163], 164: OOP[164], 175: DATA[175]}),
    164: ({163: DATA[163], 175: DATA[175]}, {163: DATA[163], 164: OOP[164], 175: DATA[175]}),
}


def fire(replace=None, grad_v=True):
    ops = compile_alone(OPS, {"index_inner_product", "index_reduce"}, {"th": th, "torch": torch})
    ns = compile_alone(FIRE, {"FIRE._update_algo_param"}, {"th": th, "index_inner_product": ops["index_inner_product"]},
                       replace=replace or {})

    def go():
        n_atoms = 5
        v0 = th.randn(1, n_atoms, 3, requires_grad=grad_v)
        me = types.SimpleNamespace(
            is_concat_X=True, _hold_samples=False, masses=th.ones(1, n_atoms, 1), t=th.full((1, n_atoms, 1), 0.1),
            a=th.full((1, n_atoms, 1), 0.1), n_count=th.zeros(1, n_atoms, 1), v=v0 * 1.0, N_min=5, fac_inc=1.1,
            MAX_STEPLENGTH=1.0, alpha_fac=0.99, fac_dec=0.5, alpha=0.1)
        mask = th.tensor([True, True, False, True, True])
        scatter_idx = th.tensor([0, 0, 1, 1])
        X_grad = th.randn(1, 4, 3, requires_grad=True)
        ns["_update_algo_param"](me, mask, None, scatter_idx, X_grad, None, None, None)
        me.v_.sum().backward()
    return go


for n, (path, control) in FIRE_RUNS.items():
    FID = f"BUCToolkit/BatchOptim/minimize/FIRE.py:{n}:IPF103"
    attempt(FID, "path", f"FIRE._update_algo_param (concatenated layout, 4 of 5 atoms active), a velocity and a "
            f"gradient that require grad, :{n} isolated, backward of the updated velocity: raises", fire(path))
    attempt(FID, "control", f"the same with :{n} out of place: runs", fire(control))
FID = "BUCToolkit/BatchOptim/minimize/FIRE.py:175:IPF103"
attempt(FID, "path", "as shipped (:163, :164, :175 in place), a velocity that requires grad: raises", fire())
attempt(FID, "context", ":163 and :164 out of place, :175 as shipped: runs (it writes the rebound velocity, which "
        "nothing saved; not isolated)", fire({163: OOP[163], 164: OOP[164]}))
attempt(FID, "context", "as shipped, a velocity without grad (only the gradient requires grad): runs",
        fire(grad_v=False))


# --- QN.py:213 (`QN._update_algo_param`, the concatenated layout): Powell damping, `g_go.addcmul_(...)` writes
# `g_go`, which `index_inner_product(displace, g_go, ...)` saved (for the displacement's gradient). But the same
# branch then updates the inverse Hessian with `th.addmm(gdd[0], ..., out=H_inv_now_[0])`, an `out=` call whose
# operands carry the damped curvature's grad: it refuses them in the forward, and the method hands nothing back
# (it writes `self.H_inv` through that out= call). Without grad nothing is saved. False (out-call-aborts-forward,
# as CG's). `QN._update_algo_param` is compiled alone with a stand-in `_index_outer_prod` (the dense per-structure
# outer product as a sparse tensor; the shipped one goes through `indices_pairwise_dist`).
QN = src("BUCToolkit/BatchOptim/minimize/QN.py")
assert linecache.getline(QN, 213).strip().startswith(
    "g_go.addcmul_(phi.index_select(1, batch_scatter_indices), displace)")
assert linecache.getline(QN, 224).strip() == \
    "th.addmm(gdd[0], I_gamma_dgo, H_inv_now_[0] @ I_gamma_god, out=H_inv_now_[0])"


def outer(u, v, big):
    du = u.reshape(-1, 1) * v.reshape(1, -1)
    same = big.reshape(-1, 1) == big.reshape(1, -1)
    return (du * same).to_sparse()


def qn(stop=False, control=False, grad=True):
    ops = compile_alone(OPS, {"index_inner_product", "index_reduce"}, {"th": th, "torch": torch})
    replace = {}
    if stop:
        replace[214] = "return g_go"
    if control:
        replace[213] = "g_go = g_go.addcmul(phi.index_select(1, batch_scatter_indices), displace)"
    ns = compile_alone(QN, {"QN._update_algo_param"}, {"th": th, "index_inner_product": ops["index_inner_product"]},
                       replace=replace)

    def go():
        n, d = 4, 3
        me = types.SimpleNamespace(is_concat_X=True, n_dim=d, H_inv=th.eye(n * d).reshape(1, n, d, n, d) * 3.0,
                                   Ident=th.eye(n * d).reshape(1, n, d, n, d), _index_outer_prod=outer)
        mask = th.ones(n, dtype=th.bool)
        scatter_idx = th.tensor([0, 0, 1, 1])
        displace = th.randn(1, n, d, requires_grad=grad)
        g_old = th.randn(1, n, d)
        g = g_old - 0.5 * displace.detach()  # sy < 0.2 ss: the damping branch (:213) runs
        out = ns["_update_algo_param"](me, mask, None, scatter_idx, g, g_old, None, displace)
        if out is not None:
            out.sum().backward()
    return go


assert linecache.getline(QN, 214).strip().startswith("sy = th.sum(index_inner_product(displace, g_go")
FID = "BUCToolkit/BatchOptim/minimize/QN.py:213:IPF103"
attempt(FID, "path", "QN._update_algo_param (concatenated, 2 structures), a displacement that requires grad and "
        "curvature that triggers the damping (:213 runs): the out= addmm (:224) refuses grad in the forward "
        "(RuntimeError), nothing is handed back", qn(), expected=(RuntimeError,))
attempt(FID, "path", "the same without grad (as QN runs it, under no_grad): runs", qn(grad=False))
attempt(FID, "context", "stopped right after :213 with g_go handed back and differentiated: raises", qn(stop=True))
attempt(FID, "context", "the same with :213 out of place: runs", qn(stop=True, control=True))


# --- Krylov.py:1125 (`KrylovDynamics._update_direction`): `force_norm.clamp_min_(eps)` writes `force_norm`, the
# result of `.sqrt_()` (:1122), which sqrt_ saved. The force norm scales the velocity update that the method keeps
# (`self._veloc`); the rest of the method has no out= call. A gradient (or Ritz pair) that requires grad makes
# backward raise: real by this file's convention (optimiser state that requires grad; the library runs it under
# no_grad). `_update_direction` is compiled alone and stopped right after :1125 (`return force_norm`), before the
# eigen solver's next run.
assert linecache.getline(KRY, 1125).strip() == "force_norm.clamp_min_(th.finfo(force_norm.dtype).eps)"


def krylov(control=False):
    replace = {1127: "return force_norm"}
    if control:
        replace[1125] = "force_norm = force_norm.clamp_min(th.finfo(force_norm.dtype).eps)"
    ops = compile_alone(OPS, {"index_inner_product", "index_reduce"}, {"th": th, "torch": torch})
    ns = compile_alone(KRY, {"KrylovDynamics._update_direction"},
                       {"th": th, "index_ops": types.SimpleNamespace(**ops)}, replace=replace)

    def go():
        n_atoms, d, k = 5, 3, 3
        scatter_idx = th.tensor([0, 0, 0, 1, 1])
        me = types.SimpleNamespace(
            s=types.SimpleNamespace(batch_tensor=th.tensor([9.0, 6.0]), atom_masks=th.ones(1, n_atoms, d)),
            _eigenval=th.tensor([[-0.5, 0.8, 1.2], [-0.3, 0.9, 2.0]]), _eigenvec=th.randn(k, n_atoms, d),
            _morse_index=1, _extra_krylov_dim=1, neg_spectra_cutoff=-0.1, pos_spectra_cutoff=0.1)
        g = th.randn(1, n_atoms, d, requires_grad=True)
        X = th.randn(1, n_atoms, d)
        ns["_update_direction"](me, g, None, None, X, scatter_idx).sum().backward()
    return go


assert linecache.getline(KRY, 1127).strip() == "force_hat = ("
FID = "BUCToolkit/BatchOptim/TS/Krylov.py:1125:IPF103"
attempt(FID, "path", "KrylovDynamics._update_direction up to :1125 (2 structures, Morse index 1), a gradient that "
        "requires grad, backward of the force norm: raises", krylov())
attempt(FID, "control", "the same with :1125 out of place: runs", krylov(control=True))


# --- Dimer.py:356, :357, :358 (`Dimer._update_direction`): the 2x2 subspace Hessian's eigenvalues from
# `th.linalg.eigh(H22)` (:355), which eigh saves, are written in place (`eigenvalues[:, 0] = th.where(...)`,
# `eigenvalues[:, 0].clamp_(max=-0.1)`, `eigenvalues[:, 1].clamp_(min=0.1)`). A gradient that requires grad makes H22
# (through the rotation direction u and its Hessian-vector product) require grad, and backward raises: real by this
# file's convention (optimiser state that requires grad; the library runs it under no_grad). The rest of the method
# (the step, the rotator's run) has no out= call. `_update_direction` is compiled alone, stopped right after :358
# (`return eigenvalues`), with a stand-in `fin_diff_hvp` (a fixed quadratic model: Hu = A u); each line is isolated
# by writing the other two through `eigenvalues.data`, and its control writes it through `.data` too.
DIMER_LINES = {356: "eigenvalues[:, 0] = th.where(eigenvalues[:, 0] >= 0., -eigenvalues[:, 0], eigenvalues[:, 0])",
               357: "eigenvalues[:, 0].clamp_(max=-0.1)", 358: "eigenvalues[:, 1].clamp_(min=0.1)"}
for n, text in DIMER_LINES.items():
    assert linecache.getline(DIMER, n).strip() == text, n
assert linecache.getline(DIMER, 359).strip().startswith("subspace_grad = th.cat((vg, ug)")


def dimer(shipped=()):
    replace = {n: text.replace("eigenvalues[", "eigenvalues.data[", 1) for n, text in DIMER_LINES.items()
               if n not in shipped}
    replace[359] = "return eigenvalues"
    ops = compile_alone(OPS, {"index_inner_product", "index_reduce"}, {"th": th, "torch": torch})
    A = th.diag(th.linspace(-1.0, 2.0, 15))

    def hvp(*args, **kwargs):
        u = args[7]
        return None, None, (u.reshape(1, -1) @ A).reshape(u.shape)

    ns = compile_alone(DIMER, {"Dimer._update_direction"},
                       {"th": th, "index_ops": types.SimpleNamespace(**ops), "fin_diff_hvp": hvp}, replace=replace)

    def go():
        torch.manual_seed(1)
        n_atoms, d = 5, 3
        scatter_idx = th.tensor([0, 0, 0, 1, 1])
        v = th.randn(1, n_atoms, d)
        v = v / v.norm()
        me = types.SimpleNamespace(
            s=types.SimpleNamespace(atom_masks=th.ones(1, n_atoms, d), func_args=(), func_kwargs={},
                                    grad_func_args=(), grad_func_kwargs={}),
            _v=v, _Hv=(v.reshape(1, -1) @ A).reshape(v.shape), _vHv=th.tensor([[[-0.3], [0.2]]]),
            _func=None, _grad_func=None, _is_grad_func_contain_y=False, _require_grad=False)
        g = th.randn(1, n_atoms, d, requires_grad=True)
        ns["_update_direction"](me, g, None, None, th.randn(1, n_atoms, d), scatter_idx).sum().backward()
    return go


for n in DIMER_LINES:
    FID = f"BUCToolkit/BatchOptim/TS/Dimer.py:{n}:IPF104"
    attempt(FID, "path", f"Dimer._update_direction up to :358 (2 structures), a gradient that requires grad, :{n} "
            "as shipped and the other two through .data, backward of the eigenvalues: raises", dimer(shipped=(n,)))
    attempt(FID, "control", f"the same with :{n} through .data too: runs", dimer())


# --- the Lanczos and rotation solvers' `run` (TS/_eigen_solver.py `FindEigen.run` :429-478 and `FindMinEigen.run`
# :867-940; their legacy copies TS_old/Krylov.py `FindEigen.run` :375-418 and TS_old/Dimer.py `FindMinEigen.run`
# :431-499). Each `run` is compiled alone from the shipped file with the shipped `fin_diff_hvp` (utils/
# grad_functions.py) and index helpers, a stand-in self for BaseMotion's `handle_*` methods (no dtype change, the
# batch indices of two structures of 4 and 3 atoms, a mask of ones), a quadratic energy with an analytic gradient
# (g(X) = a * X, curvatures from -1 to 3), `require_grad=True`, and an initial direction `v` that requires grad
# (a non-leaf): the eigenvector estimates then carry grad through the finite-difference Hessian-vector products. The
# library runs these under no_grad with a fresh direction: the real ones are real by this file's convention (an
# input that requires grad). Each flagged line is run as shipped with every other flagged line, and the other
# in-place scatter-backs of the loop, made out of place (the same-tensor writes before it in its chain through
# `.data` instead, so that it writes the tensor that was saved, as FIRE :164); its control makes it out of place
# too. Dynamic batches (`_hold_samples=False`, the default); the hold runs are contexts.
#
# False ones: the scatter-backs of the Ritz state into `KRYLOV_BASES`, `KRYLOV_HESSIAN`, `KRYLOV_EIGENVAL`
# (:475, :476, :478; legacy :415, :416, :418) and `g` (:940; legacy :499) are proven because the hold branch binds
# the owner to the working tensor (`KRYLOV_BASES = krylov_bases_`, `g = g2_`), but the flag is fixed for the run
# (flag-exclusive-alias, as the optimisers' scatter-backs; g also carries no grad, fin_diff_hvp detaches it).
# `w.index_copy_` (:894; legacy :453) writes the w that `index_inner_product(v, w, ...)` saved, but that product
# feeds only `abort_mask = ... < 1.e-7` (comparison-only-saver, through a helper, as CG's).
GF = src("BUCToolkit/utils/grad_functions.py")


def func_range(path, cls, name):
    tree = ast.parse(open(path).read())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item.lineno, item.end_lineno
    raise SystemExit((path, cls, name))

def find(path, rng, text, which=0):
    hits = [n for n in range(rng[0], rng[1] + 1) if linecache.getline(path, n).split("#")[0].strip() == text]
    return hits[which]

def oop(text):
    m = re.fullmatch(r"(\w+)\.(mul_|add_|sub_|index_copy_)\((.*)\)", text)
    if m:
        return f"{m[1]} = {m[1]}.{m[2][:-1]}({m[3]})"
    if text == "krylov_bases_[i, :, :] = w_[0].clone()":
        return "krylov_bases_ = th.cat([krylov_bases_[:i], w_[0].clone().unsqueeze(0), krylov_bases_[i + 1:]], 0)"
    raise SystemExit(text)

EIGEN_FLAGGED = [('u_.sub_(th.einsum("kbd, kb -> bd", krylov_bases_[:i], Vu).unsqueeze(0))', 0),
                 ('u_.sub_(th.einsum("kbd, kb -> bd", krylov_bases_[:i], Vu).unsqueeze(0))', 1),
                 ("krylov_bases_[i, :, :] = w_[0].clone()", 0),
                 ("beta.index_copy_(1, select_indices_short, beta_)", 0),
                 ("KRYLOV_BASES.index_copy_(1, select_indices, krylov_bases_)", 0),
                 ("KRYLOV_HESSIAN.index_copy_(0, select_indices_short, krylov_hessian_)", 0),
                 ("KRYLOV_EIGENVAL.index_copy_(0, select_indices_short, sub_eigval_)", 0)]
EIGEN_OTHER = [(t, 0) for t in ("y.index_copy_(0, select_indices_short, y2_t)", "v.index_copy_(1, select_indices, v_)",
                                "u.index_copy_(1, select_indices, u_)", "Hv.index_copy_(1, select_indices, Hv_)",
                                "g.index_copy_(1, select_indices, g2_)",
                                "KRYLOV_EIGENVEC.index_copy_(0, select_indices_short, sub_eigvec_)",
                                "krylov_eigenval_old.index_copy_(0, select_indices_short, krylov_eigenval_old_)")]
MIN_FLAGGED = [(t, 0) for t in ("v_.mul_(cos_t_)", "v_.add_(w_ * sin_t_)", "v_.mul_(atom_masks_)", "Hv_.mul_(cos_t_)",
                                "Hv_.add_(Hw_ * sin_t_)", "Hv_.mul_(atom_masks_)",
                                "v.index_copy_(1, select_indices, v_)", "w.index_copy_(1, select_indices, w_)",
                                "Hv.index_copy_(1, select_indices, Hv_)",
                                "gT_norm.index_copy_(1, select_indices_short, gT_norm_)")] + \
    [("Hv.mul_(atom_masks)", -1), ("g.mul_(atom_masks)", -1)]
MIN_OTHER = [(t, 0) for t in ("y.index_copy_(0, select_indices_short, y2_t)",
                              "vHv.index_copy_(1, select_indices_short, vHv_)", "g.index_copy_(1, select_indices, g2_)",
                              "theta.index_copy_(0, select_indices_short, theta_)")]

def lines_of(path, cls, specs):
    rng = func_range(path, cls, "run")
    return {find(path, rng, t, w): t for t, w in specs}

def build(path, cls, replace):
    ops = compile_alone(OPS, {"index_inner_product", "index_reduce"}, {"th": th, "torch": torch})
    index_ops = types.SimpleNamespace(**ops)
    gf = compile_alone(GF, {"fin_diff_hvp"}, {"th": th, "index_ops": index_ops})
    ns = compile_alone(path, {f"{cls}.run"}, {"th": th, "np": np, "time": time, "index_ops": index_ops,
                                             "fin_diff_hvp": gf["fin_diff_hvp"], "preload_func": lambda f, d: f,
                                             "FLOAT_TYPE": th.float32, "nn": torch.nn}, replace=replace)
    return ns["run"], index_ops

def stand_in(hold, maxiter=6):
    me = types.SimpleNamespace(Torque_thres=1e-6, Eigen_thres=1e-6, Curve_thres=-1e3, maxiter_lanczos=maxiter,
                               maxiter_rot=maxiter, dx=1e-2, device="cpu", verbose=0, subspace_maxdim=maxiter,
                               _hold_samples=hold, logger=types.SimpleNamespace(debug=lambda *a: None))
    me.handle_dtype_device = lambda dt, dev, *ts: ts
    def hbi(bi, n_batch, device):
        bt = th.as_tensor(bi)
        return len(bt), bi, bt, th.repeat_interleave(th.arange(len(bt)), bt), None
    me.handle_batch_indices = hbi
    me.handle_grad_func = lambda gfn, c, r: (gfn, r, c)
    me._update_batch = lambda mask, a, b, c, d: (a, b, c, d)
    me.handle_motion_mask = lambda X, fixed: th.ones_like(X)
    return me

def run(path, cls, replace, hold=False, maxiter=6, n=(4, 3)):
    fn, index_ops = build(path, cls, replace)
    def go():
        th.manual_seed(0)
        N = sum(n)
        scat = th.repeat_interleave(th.arange(len(n)), th.tensor(n))
        a = th.linspace(-1.0, 3.0, N * 3).reshape(1, N, 3)
        f = lambda X: index_ops.index_reduce((0.5 * a * X * X).sum(-1), scat, 1, out_size=len(n)).reshape(-1)
        g = lambda X: a * X
        X = th.randn(1, N, 3)
        v = th.randn(1, N, 3, requires_grad=True) * 1.0
        out = fn(stand_in(hold, maxiter), f, X, v, g, is_grad_func_contain_y=False, require_grad=True,
                 batch_indices=list(n))
        loss = sum(o.sum() for o in out if isinstance(o, th.Tensor) and o.requires_grad)
        loss.backward()
    return go



def isolation(path, cls, specs, others, n):
    F = lines_of(path, cls, specs)
    O = lines_of(path, cls, others)
    neutral = {m: oop(x) for m, x in {**F, **O}.items()}
    path_rep = dict(neutral)
    del path_rep[n]
    var = F[n].split(".")[0].split("[")[0]
    for m in F:
        if m < n and F[m].split(".")[0].split("[")[0] == var:
            path_rep[m] = data_form(F[m])
    control = dict(path_rep)
    control[n] = oop(F[n])
    return path_rep, control


def data_form(text):
    m = re.fullmatch(r"(\w+)\.(mul_|add_|sub_|index_copy_)\((.*)\)", text)
    if m:
        return f"{m[1]}.data.{m[2]}({m[3]})"
    if text == "krylov_bases_[i, :, :] = w_[0].clone()":
        return "krylov_bases_.data[i, :, :] = w_[0].clone()"
    raise SystemExit(text)


SOLVERS = [
    ("BUCToolkit/BatchOptim/TS/_eigen_solver.py", "FindEigen", EIGEN_FLAGGED, EIGEN_OTHER, {475, 476, 478}),
    ("BUCToolkit/BatchOptim/TS_old/Krylov.py", "FindEigen", EIGEN_FLAGGED, EIGEN_OTHER, {415, 416, 418}),
    ("BUCToolkit/BatchOptim/TS/_eigen_solver.py", "FindMinEigen", MIN_FLAGGED, MIN_OTHER, {894, 940}),
    ("BUCToolkit/BatchOptim/TS_old/Dimer.py", "FindMinEigen", MIN_FLAGGED, MIN_OTHER, {453, 499}),
]
for rel, cls, specs, others, false_lines in SOLVERS:
    path = src(rel)
    F = lines_of(path, cls, specs)
    for n, text in sorted(F.items()):
        FID = f"{rel}:{n}:IPF10{4 if text.startswith('krylov_bases_[') else 3}"
        path_rep, control = isolation(path, cls, specs, others, n)
        what = f"{cls}.run (two structures), a direction that requires grad, :{n} (`{text[:40]}`) as shipped, the rest "
        if n in false_lines:
            attempt(FID, "path", what + "out of place or through .data: runs", run(path, cls, path_rep))
            attempt(FID, "path", f"the same with every other line out of place: runs",
                    run(path, cls, {**{m: oop(x) for m, x in {**F, **lines_of(path, cls, others)}.items()
                                       if m != n}}))
            attempt(FID, "path", "hold mode (no scatter-back), :{n} as shipped, the rest out of place: runs"
                    .replace("{n}", str(n)), run(path, cls, path_rep, hold=True))
        else:
            attempt(FID, "path", what + "out of place or through .data, backward of the results: raises",
                    run(path, cls, path_rep))
            attempt(FID, "control", f"the same with :{n} out of place: runs", run(path, cls, control))


# --- BatchMD/NVT.py:194 (`NVT._build_csver_graphs`, the CSVR thermostat's CUDA graphs): graph A's
# `s.V.addcdiv_(self._buf_F, masses, value=half_dt)` (:188) saves the force buffer for the gradient of the masses,
# and graph B's `self._buf_F.mul_(atom_masks)` (:194) writes it. The capture builds the autograd graph once (as
# eager code); masses that require grad make backward of the captured velocity raise: real by this file's
# convention (an input that requires grad; the library's masses are constants and MD runs under no_grad), and
# weak: the path is CUDA-only. Run here on CPU: `_build_csver_graphs` compiled alone with its CUDA-only guard
# (:181-182) dropped and `th.cuda.CUDAGraph()`/`th.cuda.graph(...)` as plain blocks; `_reduce_Ek_T` from the shipped
# BatchMD/_BaseMD.py; regular batch (batch_indices None). The thermostat's final `s.V *= alpha` (:212) is made out of
# place: it writes the velocity that `_reduce_Ek_T`'s `masses * V * V` saved, and raises on its own (a miss: the
# check does not prove it; the context run).
NVT = src("BUCToolkit/BatchMD/NVT.py")
BASEMD = src("BUCToolkit/BatchMD/_BaseMD.py")
assert linecache.getline(NVT, 194).strip() == "self._buf_F.mul_(atom_masks)"
assert linecache.getline(NVT, 188).strip() == "s.V.addcdiv_(self._buf_F, masses, value=half_dt)"
assert linecache.getline(NVT, 181).strip() == "if self.device.type != 'cuda':"


def nvt(control=False, grad_masses=True, shipped_212=False):
    import contextlib
    replace = {181: "pass", 212: "s.V = s.V * alpha"}  # :212 writes the V that _reduce_Ek_T saved (a miss)
    if shipped_212:
        del replace[212]
    if control:
        replace[194] = "self._buf_F = self._buf_F.mul(atom_masks)"
    plain = types.SimpleNamespace(CUDAGraph=lambda: None, graph=lambda g: contextlib.nullcontext())
    fake_th = types.ModuleType("torch")
    fake_th.__dict__.update(th.__dict__)
    fake_th.cuda = plain
    ns = compile_alone(NVT, {"NVT._build_csver_graphs"}, {"th": fake_th}, replace=replace)
    md = compile_alone(BASEMD, {"_BaseMD._reduce_Ek_T"}, {"th": th})

    def go():
        n_b, n_a = 2, 4
        me = types.SimpleNamespace(time_step=1.0, free_degree=3 * n_a - 3, epsK=1e-8, one_sub_c=0.1,
                                   EK_TARGET=th.tensor([0.5, 0.5]), sqrt_c=th.tensor(0.9),
                                   _buf_R=th.randn(n_b), _buf_S=th.rand(n_b))
        me._reduce_Ek_T = lambda bi, m, V: md["_reduce_Ek_T"](me, bi, m, V)
        masses = (th.rand(n_b, n_a, 1) + 1.0).requires_grad_(grad_masses)
        s = types.SimpleNamespace(X=th.randn(n_b, n_a, 3), V=th.randn(n_b, n_a, 3))
        ns["_build_csver_graphs"](me, s, masses, th.ones(n_b, n_a, 3), None)
        if s.V.requires_grad:
            s.V.sum().backward()
    return go


FID = "BUCToolkit/BatchMD/NVT.py:194:IPF103"
attempt(FID, "path", "the two graphs' bodies run once (the capture) with masses that require grad, backward of the "
        "captured velocity: raises", nvt())
attempt(FID, "control", "the same with :194 out of place: runs", nvt(control=True))
attempt(FID, "context", "constant masses (the library's): nothing to differentiate", nvt(grad_masses=False))
attempt(FID, "context", ":194 out of place and :212 as shipped: raises (the miss at :212)",
        nvt(control=True, shipped_212=True))


# --- BatchOptim/_utils/_line_search.py:584 (`LineSearch._backtrack`): after the loop `_steplength.clamp_min_(...)`
# is proven to write `_steplength_`, which `_steplength.index_copy_(...)` (:574) saved. In the dynamic mode the loop
# scatters the working step into the owner (`_steplength`, never an operand that saves it); the owner is the working
# step only in the hold branch (`_steplength = _steplength_`), where nothing is scattered, and there the working
# step's only saver is the Armijo test's `th.addcmul(X0, steplength, p)`/`steplength * direct_grad0`, whose results
# feed `<=` (a bool mask). False (flag-exclusive-alias; the hold mode's saver is comparison-only). `_backtrack`,
# `_Armijo_cond_irreg`, `_Armijo_cond_reg` and `_backtrack_update` are compiled alone (stand-in self: factor 0.5,
# 6 iterations); a quadratic energy per structure, a step, direction and start that require grad; backward of the
# returned step.
LS = src("BUCToolkit/BatchOptim/_utils/_line_search.py")
assert linecache.getline(LS, 584).strip() == "_steplength.clamp_min_(self._min_steplength_cache)"


def backtrack(hold, irregular=True):
    ops = compile_alone(OPS, {"index_inner_product", "index_reduce"}, {"th": th, "torch": torch})
    ns = compile_alone(LS, {"LineSearch._backtrack", "LineSearch._Armijo_cond_irreg", "LineSearch._Armijo_cond_reg",
                            "LineSearch._backtrack_update"},
                       {"th": th, "index_inner_product": ops["index_inner_product"]})

    def go():
        th.manual_seed(0)
        me = types.SimpleNamespace(factor=0.5, maxiter=6, _min_steplength_cache=th.scalar_tensor(1e-4),
                                   _hold_samples=hold, verbose=0,
                                   logger=types.SimpleNamespace(warning=lambda *a: None, info=lambda *a: None))
        for name in ("_Armijo_cond_irreg", "_Armijo_cond_reg", "_backtrack_update"):
            setattr(me, name, (lambda f: lambda *a, **k: f(me, *a, **k))(ns[name]))
        me._update_batch = lambda mask, a, b, c, d: (a, b, c, d)
        if irregular:
            n = th.tensor([3, 2])
            scat = th.repeat_interleave(th.arange(2), n)
            f = lambda X: ops["index_reduce"]((X * X).sum(-1) - X.sum(-1), scat, 1, out_size=2).reshape(-1)
            shape, step_shape, bi = (1, 5, 3), (1, 2, 1), n
        else:
            f = lambda X: (X * X).sum((-1, -2)) - X.sum((-1, -2))
            shape, step_shape, bi = (1, 4, 3), (1, 1, 1), None  # one structure: `steplength[:, select_mask, :]`
            # (:527) fails for regular batches of more than one
        X0 = th.randn(shape, requires_grad=True) * 1.0
        y0 = f(X0)
        grad = 2 * X0 - 1
        p = -grad * 3.0  # overshoots: the backtracking runs
        step = th.ones(step_shape, requires_grad=True) * 1.0
        out = ns["_backtrack"](me, f, None, X0, y0, grad, p, step, False, batch_indices=bi)
        assert (out.detach() < 1.0).all()  # the loop backtracked
        out.sum().backward()
    return go


FID = "BUCToolkit/BatchOptim/_utils/_line_search.py:584:IPF103"
attempt(FID, "path", "_backtrack, dynamic batches (irregular, 2 structures), start, direction and step that require "
        "grad, backward of the step: runs", backtrack(False))
attempt(FID, "path", "a regular batch of one structure, dynamic: runs", backtrack(False, irregular=False))
attempt(FID, "path", "regular batches, hold mode: runs (the irregular hold mode hands the atom counts as scatter "
        "indices and fails before the loop)", backtrack(True, irregular=False))


# --- BatchOptim/_utils/_line_search.py:975, :991 (`LineSearch._more_thuente`, irregular and regular batches):
# `self.STORE_GRAD.index_copy_(..., self.tmp_STORE_GRAD)` scatters the trial gradient into the stored one. Before the
# loop `self.STORE_GRAD = self.tmp_STORE_GRAD` (:687) binds the store to the first trial gradient, which the Wolfe
# test's `index_inner_product(dy1, p, ...)` (or `dy1 * p`) saved for the direction's gradient; the loop's first
# scatter writes it. A search direction that requires grad makes backward of the returned step raise: real by this
# file's convention (the line search runs under no_grad in the library). `_more_thuente` is compiled alone with
# `_Wolfe_cond_irreg`, `_Wolfe_cond_reg`, `_2ord_interp`, `_3ord_hermite_interp` and `_extrapolation` (stand-in
# `_calc_y_grad`: a quartic energy per structure and its analytic gradient); every other in-place write of
# `_more_thuente` (the loop's scatter-backs, `_steplength_old.copy_`, the final `clamp_min_`) is made out of place,
# and so are three in the helpers that raise on their own (unproven, misses): `_2ord_interp`'s
# `d_xhl.mul_(d_xhl)` (:417, after `th.addcmul` saved d_xhl) and `_3ord_hermite_interp`'s `_a.add_(eps)` (:383,
# after `th.addcmul(_b**2, _a, _c)` saved _a), with `_gh_plus_gl.add_(g_l)` (:375). Regular batches: one structure
# (the regular dynamic path indexes the step with a mask of the batch size and fails for more). Hold mode: runs.
MT = ["_more_thuente", "_Wolfe_cond_irreg", "_Wolfe_cond_reg", "_2ord_interp", "_3ord_hermite_interp", "_extrapolation"]
MT_RANGE = func_range(LS, "LineSearch", "_more_thuente")
assert linecache.getline(LS, 975).strip() == "self.STORE_GRAD.index_copy_(1, select_indices_long, self.tmp_STORE_GRAD)"
assert linecache.getline(LS, 991).strip() == "self.STORE_GRAD.index_copy_(0, select_indices, self.tmp_STORE_GRAD)"
assert linecache.getline(LS, 687).strip() == "self.STORE_GRAD = self.tmp_STORE_GRAD"
HELPERS = {417: ("d_xhl.mul_(d_xhl)", "d_xhl = d_xhl * d_xhl"),
           375: ("_gh_plus_gl.add_(g_l)", "_gh_plus_gl = _gh_plus_gl + g_l"),
           383: ("_a.add_(self._epsilon_cache)", "_a = _a + self._epsilon_cache")}
for n, (old, new) in HELPERS.items():
    assert linecache.getline(LS, n).split("#")[0].strip() == old, n


def mt_neutral():
    out = {}
    for n in range(MT_RANGE[0], MT_RANGE[1] + 1):
        s = linecache.getline(LS, n).split("#")[0].strip()
        m = re.fullmatch(r"([\w\.]+)\.(index_copy_|clamp_min_|copy_)\((.*)\)", s)
        if m and n not in (975, 991):
            out[n] = f"{m[1]} = {m[1]}.{m[2][:-1]}({m[3]})" if m[2] != "copy_" else f"{m[1]} = ({m[3]}).clone()"
    out.update({n: new for n, (old, new) in HELPERS.items()})
    return out


def more_thuente(line, control=False, hold=False):
    ops = compile_alone(OPS, {"index_inner_product", "index_reduce"}, {"th": th, "torch": torch})
    replace = mt_neutral()
    if control:
        dim = 1 if line == 975 else 0
        idx = "select_indices_long" if line == 975 else "select_indices"
        replace[line] = f"self.STORE_GRAD = self.STORE_GRAD.index_copy({dim}, {idx}, self.tmp_STORE_GRAD)"
    ns = compile_alone(LS, {f"LineSearch.{m}" for m in MT},
                       {"th": th, "index_inner_product": ops["index_inner_product"]}, replace=replace)
    irregular = line == 975

    def go():
        th.manual_seed(0)
        lg = types.SimpleNamespace(warning=lambda *a: None, info=lambda *a: None, debug=lambda *a: None)
        me = types.SimpleNamespace(factor=0.5, maxiter=8, _min_steplength_cache=th.scalar_tensor(1e-4),
                                   _epsilon_cache=th.scalar_tensor(1e-20), _hold_samples=hold, verbose=0, logger=lg,
                                   MAX_STEPLENGTH_COEFFICIENT=5.0, WOLFE_RHO=0.001, WOLFE_BETA=0.4,
                                   require_grad=False, handle_motion_mask=lambda X, f: th.ones_like(X))
        for name in MT[1:]:
            setattr(me, name, (lambda f: lambda *a, **k: f(me, *a, **k))(ns[name]))
        me._update_batch = lambda mask, a, b, c, d: (a, b, c, d)
        if irregular:
            n = th.tensor([3, 2])
            scat = th.repeat_interleave(th.arange(2), n)
            c = th.tensor([[[1.0], [2.0], [0.5], [3.0], [1.5]]])
            f = lambda X: ops["index_reduce"]((c * X ** 4).sum(-1) - X.sum(-1), scat, 1, out_size=2).reshape(-1)
            X0, step = th.randn(1, 5, 3) * 0.3, th.ones(1, 2, 1)
        else:
            n = None
            c = th.tensor([[[1.0], [2.0], [0.5]]])
            f = lambda X: ((c * X ** 4).sum(-1) - X.sum(-1)).sum(-1)
            X0, step = th.randn(1, 3, 3) * 0.3, th.ones(1, 1, 1)
        gfun = lambda X: 4 * c * X ** 3 - 1
        me._calc_y_grad = lambda X, func, fa, fk, gf, ga, gk, rg, cy: (func(X), gf(X))
        grad = gfun(X0)
        p = (-grad * 0.2).requires_grad_() * 1.0
        out = ns["_more_thuente"](me, f, gfun, X0, f(X0), grad, p, step, False, batch_indices=n)
        assert (out.detach() != 1.0).any()  # the search moved the step
        out.sum().backward()
    return go


for n, layout in ((975, "irregular (2 structures)"), (991, "regular (1 structure)")):
    FID = f"BUCToolkit/BatchOptim/_utils/_line_search.py:{n}:IPF103"
    attempt(FID, "path", f"_more_thuente, {layout}, a direction that requires grad, the other in-place writes out of "
            "place, backward of the step: raises", more_thuente(n))
    attempt(FID, "control", f"the same with :{n} out of place: runs", more_thuente(n, control=True))
    attempt(FID, "context", "hold mode (no scatter): runs", more_thuente(n, hold=True))
