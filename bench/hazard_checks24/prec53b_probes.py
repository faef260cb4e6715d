"""Stop 53 (fresh53b, end of stop): one small program per false group of the proven tier found on the code bases
first measured by fresh53b. The merged main 5d1eab9 proves each `probe` (`inplacefix check prec53b_probes.py`), and
each probe runs backward fine (`python prec53b_probes.py`); each has a control, the same code with what makes it
safe taken away, that raises."""

import torch
from torch import Tensor, nn
from torch.autograd import grad


# torch-parameter-no-grad (unsloth studio/backend/core/inference/diffusion_rocm_compile.py:200): `torch` is the
# function's own parameter (its caller hands it the torch module), so `with torch.no_grad():` is not recognised and
# the parameter copy under it is read as running with grad on.
def fill_probe(torch, lin):
    with torch.no_grad():
        for p in lin.parameters():
            p.copy_(torch.zeros(p.shape))
    return lin


def fill_control(torch, lin):
    with torch.enable_grad():
        for p in lin.parameters():
            p.copy_(torch.zeros(p.shape))
    return lin


# attribute-operand-unknown (bioelectrics ionic/model.py:209): `c * self._z` saves the view of x only for the
# gradient of `self._z`, and `self._z = self.profile.z` is a property that builds a constant tensor (never requires
# grad). The attribute of unknown grad is read as yes (as fresh52b's quark case).
class Profile:
    @property
    def z(self):
        return torch.tensor([1.0, -1.0, 2.0])


class Tissue:
    def __init__(self, z=None):
        self.profile = Profile()
        self._z = self.profile.z if z is None else z

    def vmem(self, c):
        return (c * self._z).sum(dim=1)

    def with_vmem(self, state, v):
        x = state.clone()
        x[:, 0] = x[:, 0] + (v - self.vmem(x[:, :3]))
        return x


def tissue_probe(state, v):
    return Tissue().with_vmem(state, v)


def tissue_control(state, v):  # valences that require grad: the product saves x's view
    return Tissue(torch.tensor([1.0, -1.0, 2.0], requires_grad=True)).with_vmem(state, v)


# consumed-graph (adv-lib primal_dual_gradient_descent.py:142, structured_adversarial_attack.py:217, :221, :285):
# the product saved `lam`, but its graph is consumed by `autograd.grad` (no retain_graph) before the write, and a
# new graph is built on the next step; nothing else reaches the saved node.
def consumed_probe(model, inputs, steps: int = 3):
    r = torch.zeros_like(inputs, requires_grad=True)
    lam = torch.zeros(len(inputs), 2).softmax(dim=1)
    for _ in range(steps):
        l2 = r.flatten(1).norm(p=2, dim=1)
        loss = lam[:, 0] * l2 + lam[:, 1] * model(inputs + r).sum(1)
        g = grad(loss.sum(), inputs=r, only_inputs=True)[0]
        r.data.add_(g, alpha=-0.1)
        lam.lerp_(torch.ones(len(inputs), 2) / 2, weight=0.1)
    return r.detach()


def consumed_control(model, inputs, steps: int = 3):  # the write before the grad
    r = torch.zeros_like(inputs, requires_grad=True)
    lam = torch.zeros(len(inputs), 2).softmax(dim=1)
    for _ in range(steps):
        l2 = r.flatten(1).norm(p=2, dim=1)
        loss = lam[:, 0] * l2 + lam[:, 1] * model(inputs + r).sum(1)
        lam.lerp_(torch.ones(len(inputs), 2) / 2, weight=0.1)
        g = grad(loss.sum(), inputs=r, only_inputs=True)[0]
        r.data.add_(g, alpha=-0.1)
    return r.detach()


# comparison-only-saver (adv-lib fast_adaptive_boundary/projections.py:101, :107, :109): `d * w` saves d, but its
# result feeds only `> 0`, a bool without grad_fn, so no backward reaches that node. (Bisected: not proven without
# the `(t - 1).div_(w)` and `clamp_` that make r, nor without the loop of `torch.where(c3, ...)`.)
def compare_probe(t: Tensor, w: Tensor, c: Tensor, lb: Tensor, ub: Tensor):
    r = torch.maximum(t / w, (t - 1).div_(w)).clamp_(min=-1e12, max=1e12)
    d = (r * w).neg_()
    c3 = (d * w).sum(dim=1).add_(c) > 0
    for _ in range(2):
        ub = torch.where(c3, ub, lb)
    d[c3] = (d[c3] * 2).sub_(1)
    return d


def compare_control(t: Tensor, w: Tensor, c: Tensor, lb: Tensor, ub: Tensor):  # the product's value is returned too
    r = torch.maximum(t / w, (t - 1).div_(w)).clamp_(min=-1e12, max=1e12)
    d = (r * w).neg_()
    s = (d * w).sum(dim=1).add_(c)
    c3 = s > 0
    for _ in range(2):
        ub = torch.where(c3, ub, lb)
    d[c3] = (d[c3] * 2).sub_(1)
    return d + s.unsqueeze(1)


# unreturned-saver (adv-lib fast_minimum_norm.py:186): `torch.where(..., torch.where(found, ...))` saves the mask
# `found` for the gradient of eps (which requires grad: in fmn through the inputs' worst norm, or δ's norm), and
# `found.logical_or_` writes it on the next step; but eps only steers the loop: it is never returned or
# differentiated. (Bisected: not proven with eps and found made locally from torch.full/torch.zeros.)
def where_probe(inputs: Tensor, is_adv: Tensor, found: Tensor, eps: Tensor, steps: int = 3):
    worst = torch.maximum(inputs, 1 - inputs).flatten(1).norm(p=2, dim=1)
    for _ in range(steps):
        found.logical_or_(is_adv)
        eps = torch.where(is_adv, eps * 0.9, torch.where(found, eps * 1.1, eps + 1))
        eps = torch.minimum(eps, worst)
    return inputs.clone()


def where_control(inputs: Tensor, is_adv: Tensor, found: Tensor, eps: Tensor, steps: int = 3):  # eps handed back
    worst = torch.maximum(inputs, 1 - inputs).flatten(1).norm(p=2, dim=1)
    for _ in range(steps):
        found.logical_or_(is_adv)
        eps = torch.where(is_adv, eps * 0.9, torch.where(found, eps * 1.1, eps + 1))
        eps = torch.minimum(eps, worst)
    return inputs.clone() + eps.unsqueeze(1)


def main():
    def raises(fn):
        try:
            fn()
        except RuntimeError as e:
            assert "inplace" in str(e) or "in-place" in str(e), e
            return True
        return False

    def fill(f):
        def go():
            lin = nn.Linear(3, 2)
            f(torch, lin)
            lin(torch.randn(4, 3)).sum().backward()
        return go

    def tissue(f):
        return lambda: f(torch.rand(2, 5, requires_grad=True) * 1.0, torch.rand(2, requires_grad=True)).sum().backward()

    def consumed(f):
        def go():
            model = nn.Linear(4, 3)
            f(model, torch.rand(2, 4))
        return go

    def compare(f):
        def go():
            g = torch.Generator().manual_seed(0)
            t, w = torch.rand(6, 5, generator=g), torch.randn(6, 5, generator=g).requires_grad_()
            c = torch.randn(6, generator=g)
            f(t, w * 1.0, c, torch.zeros(6), torch.full((6,), 4.0)).sum().backward()
        return go

    def where(f):
        return lambda: f(torch.rand(4, 3, requires_grad=True) * 1.0, torch.tensor([True, False, True, False]),
                         torch.zeros(4, dtype=torch.bool), torch.ones(4, requires_grad=True)).sum().backward()

    for name, make, probe, control in (("fill", fill, fill_probe, fill_control),
                                       ("tissue", tissue, tissue_probe, tissue_control),
                                       ("consumed", consumed, consumed_probe, consumed_control),
                                       ("compare", compare, compare_probe, compare_control),
                                       ("where", where, where_probe, where_control)):
        assert not raises(make(probe)), name
        assert raises(make(control)), name
        print(f"{name}: probe runs backward, control raises")


if __name__ == "__main__":
    main()
