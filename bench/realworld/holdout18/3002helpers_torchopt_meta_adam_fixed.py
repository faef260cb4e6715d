# Library module for case 3002 (reference: the fix of commit f398493, `.add(eps)` after `sqrt_()`).
# metaopt/torchopt (differentiable optimizers for meta-learning), read at the parent of commit f398493
# ("fix(transform): fix inplace sqrt_ with add_", 2022-09-20): torchopt/_src/transform.py (_update_moment,
# _bias_correction, _inc_count, ScaleByAdamState, _scale_by_adam, _scale), torchopt/_src/alias.py (adam,
# _scale_by_neg_lr), torchopt/_src/combine.py (chain), torchopt/_src/update.py (apply_updates),
# torchopt/_src/utils.py (_extract_container) and torchopt/_src/optimizer/meta/{base,adam}.py (MetaOptimizer,
# MetaAdam). Written anew at small size (not copied), in one module: the gradient-transformation pairs (init, update)
# over flat lists of tensors, the moment updates and bias correction, the Adam rescaling whose out-of-place branch
# (`inplace=False`, the one MetaOptimizer.step uses) computes `m.div(v.add(eps_root).sqrt_().add_(eps))` (the
# statement at fault: `add_` overwrites the result of `sqrt_`, which sqrt's backward saved), and the meta-optimizer
# that takes `torch.autograd.grad(..., create_graph=True)` and writes the updated (non-leaf) tensors into the module's
# `_parameters` dictionaries, follow the source.
# Stand-ins: flat lists instead of optree pytrees (with_flattened_tree is the identity here), no weight decay /
# maximize transform (alias.adam inserts `identity()` for the defaults), no learning-rate schedules, no accelerated
# (fused C++) Adam, no state-dict helpers.
from typing import Any, Callable, List, NamedTuple

import torch
from torch import nn

INT32_MAX = torch.iinfo(torch.int32).max


class GradientTransformation(NamedTuple):
    init: Callable
    update: Callable


class EmptyState(NamedTuple):
    pass


def identity():
    def init_fn(params):
        return EmptyState()

    def update_fn(updates, state, *, params=None, inplace=True):
        return updates, state

    return GradientTransformation(init_fn, update_fn)


def chain(*transforms):
    init_fns, update_fns = tuple(zip(*transforms))

    def init_fn(params):
        return tuple(fn(params) for fn in init_fns)

    def update_fn(updates, state, *, params=None, inplace=True):
        new_state = []
        for s, fn in zip(state, update_fns):
            updates, new_s = fn(updates, s, params=params, inplace=inplace)
            new_state.append(new_s)
        return updates, tuple(new_state)

    return GradientTransformation(init_fn, update_fn)


def map_flattened(func, *args):
    return list(map(func, *args))


def _inc_count(updates, count):
    def f(c, g):
        return c + (c != INT32_MAX).to(torch.int32) if g is not None else c

    return map_flattened(f, count, updates)


def _update_moment(updates, moments, decay, *, order, inplace=True):
    """Compute the exponential moving average of the ``order``-th moment."""
    if inplace:
        if order == 2:
            def f(g, t):
                return t.mul_(decay).addcmul_(g, g, value=1 - decay) if g is not None else t
        else:
            def f(g, t):
                return t.mul_(decay).add_(g, alpha=1 - decay) if g is not None else t
    else:
        if order == 2:
            def f(g, t):
                return t.mul(decay).addcmul_(g, g, value=1 - decay) if g is not None else t
        else:
            def f(g, t):
                return t.mul(decay).add_(g, alpha=1 - decay) if g is not None else t
    return map_flattened(f, updates, moments)


def _bias_correction(moment, decay, count):
    def f(t, c):
        return t.div(1 - decay ** c)

    return map_flattened(f, moment, count)


class ScaleByAdamState(NamedTuple):
    mu: List[torch.Tensor]
    nu: List[torch.Tensor]
    count: List[torch.Tensor]


def _scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, moment_requires_grad=False):
    def init_fn(params):
        zero = map_flattened(lambda t: torch.zeros(1, dtype=torch.int32, device=t.device).squeeze_(), params)
        mu = map_flattened(lambda t: torch.zeros_like(t, requires_grad=moment_requires_grad), params)
        nu = map_flattened(lambda t: torch.zeros_like(t, requires_grad=moment_requires_grad), params)
        return ScaleByAdamState(mu=mu, nu=nu, count=zero)

    def update_fn(updates, state, *, params=None, inplace=True):
        mu = _update_moment(updates, state.mu, b1, order=1, inplace=inplace)
        nu = _update_moment(updates, state.nu, b2, order=2, inplace=inplace)
        count_inc = _inc_count(updates, state.count)
        mu_hat = _bias_correction(mu, b1, count_inc)
        nu_hat = _bias_correction(nu, b2, count_inc)

        if inplace:
            def f(g, m, v):
                return m.div_(v.add_(eps_root).sqrt_().add(eps)) if g is not None else None
        else:
            def f(g, m, v):
                return m.div(v.add(eps_root).sqrt_().add(eps)) if g is not None else None

        updates = map_flattened(f, updates, mu_hat, nu_hat)
        return updates, ScaleByAdamState(mu=mu, nu=nu, count=count_inc)

    return GradientTransformation(init_fn, update_fn)


def _scale(step_size):
    def init_fn(params):
        return EmptyState()

    def update_fn(updates, state, *, params=None, inplace=True):
        if inplace:
            def f(g):
                return g.mul_(step_size) if g is not None else None
        else:
            def f(g):
                return g.mul(step_size) if g is not None else None
        return map_flattened(f, updates), state

    return GradientTransformation(init_fn, update_fn)


def adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, *, eps_root=0.0, moment_requires_grad=False):
    b1, b2 = betas
    return chain(
        identity(),  # _flip_sign_and_weight_decay(weight_decay=0.0, maximize=False)
        _scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, moment_requires_grad=moment_requires_grad),
        _scale(-lr),  # _scale_by_neg_lr(lr)
    )


def apply_updates(params, updates, *, inplace=True):
    if inplace:
        def f(p, u):
            if u is not None:
                p.data.add_(u)
            return p
    else:
        def f(p, u):
            return p.add(u) if u is not None else p
    return map_flattened(f, params, updates)


def _extract_container(mod):
    containers = []
    if len(mod._parameters) != 0:
        containers.append(mod._parameters)
    for module in mod.modules():
        if module is mod:
            continue
        if len(module._parameters) != 0:
            containers.append(module._parameters)
    return tuple(containers)


class MetaOptimizer:
    """The base class for high-level differentiable optimizers."""

    def __init__(self, net: nn.Module, impl: GradientTransformation):
        self.impl = impl
        self.param_containers_groups: List[Any] = []
        self.state_groups: List[Any] = []
        self.add_param_group(net)

    def step(self, loss):
        for i, (param_container, new_state) in enumerate(zip(self.param_containers_groups, self.state_groups)):
            keys = [list(container.keys()) for container in param_container]
            flattened_params = tuple(p for container in param_container for p in container.values())
            grads = torch.autograd.grad(loss, flattened_params, create_graph=True, allow_unused=True)
            updates, new_state = self.impl.update(grads, new_state, params=flattened_params, inplace=False)
            self.state_groups[i] = new_state
            flattened_new_params = iter(apply_updates(flattened_params, updates, inplace=False))
            for container, names in zip(param_container, keys):
                container.update({name: next(flattened_new_params) for name in names})

    def add_param_group(self, net):
        net_container = _extract_container(net)
        flattened_params = tuple(p for container in net_container for p in container.values())
        optimizer_state = self.impl.init(flattened_params)
        self.param_containers_groups.append(net_container)
        self.state_groups.append(optimizer_state)


class MetaAdam(MetaOptimizer):
    """The differentiable Adam optimizer."""

    def __init__(self, net, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, *, eps_root=0.0, moment_requires_grad=True):
        super().__init__(net, adam(lr=lr, betas=betas, eps=eps, eps_root=eps_root,
                                   moment_requires_grad=moment_requires_grad))
