"""Stop 55 (fresh55, end of stop): one small program per false group of the proven tier found on the code bases
first measured by fresh55. The merged main proves each `probe` (`inplacefix check fresh55_probes.py`), and each
probe runs backward fine, or refuses the input its contract excludes (`python fresh55_probes.py`); each has a
control, the same code with what makes it safe taken away, that raises."""

import torch
from torch import Tensor


# requires-grad-guard, the `assert` form (caloutils utils/scaling.py:26): `std` is the output of `a.std()` (saved
# for backward) and `std += ...` writes it, but the function opens with `assert not a.requires_grad`, so whenever
# the write is reached `std` carries no grad and nothing saved it. (prec51b's group had the `if not any(...)` form.)
def assert_probe(a: Tensor, b: Tensor):
    assert not a.requires_grad
    std = a.std()
    if std < 1e-3:
        std += 1e-6
    return (b - a.mean()) / std


def assert_control(a: Tensor, b: Tensor):  # the assert taken away
    std = a.std()
    if std < 1e-3:
        std += 1e-6
    return (b - a.mean()) / std


# non-differentiable-sink, the `.detach()` form (recstudio model/mf/irgan.py:137, :139; lightnet
# data/transform/post/_brambox.py:160): the gather saves the importance-sampling probabilities and the scatter_ writes
# them, but what they feed is handed back `.detach()`ed (and to `torch.multinomial`), so no backward reaches the
# gather's node (lightnet: the boxes leave as `.detach().cpu().numpy()`).
def detach_probe(logit: Tensor, pos: Tensor):
    prob = logit.softmax(dim=-1)
    imp = prob * 0.8
    imp.scatter_(1, pos, imp.gather(1, pos) + 0.2)
    neg = torch.multinomial(imp, 3, replacement=True)
    weight = prob.gather(1, neg) / imp.gather(1, neg)
    return weight.detach(), prob.gather(1, neg)


def detach_control(logit: Tensor, pos: Tensor):  # the weight handed back undetached
    prob = logit.softmax(dim=-1)
    imp = prob * 0.8
    imp.scatter_(1, pos, imp.gather(1, pos) + 0.2)
    neg = torch.multinomial(imp, 3, replacement=True)
    weight = prob.gather(1, neg) / imp.gather(1, neg)
    return weight, prob.gather(1, neg)


# attribute-index-read-as-view (recstudio ann/sampler.py:273, :425): `self.cp = norm[self.indices]` with
# `self.indices` a long tensor (from `torch.sort`) is an advanced-index copy, but it is read as a view of `norm`
# (exp's saved output), so the slice writes into `self.cp` are proven to write `norm`.
class Sampler:
    def __init__(self, n: int):
        self.indices = torch.randperm(n)

    def update(self, emb: Tensor):
        norm = torch.exp(-0.5 * torch.sum(emb ** 2, dim=-1))
        self.p = norm
        self.cp = norm[self.indices]
        cumsum = self.cp[0:3].cumsum(0)
        self.cp[0:3] = cumsum / cumsum[-1]
        return self.p.sum() + self.cp.sum()


class SliceSampler:  # control: the index is a slice, so `self.cp` is a view of norm
    def __init__(self, n: int):
        self.indices = slice(0, n)

    def update(self, emb: Tensor):
        norm = torch.exp(-0.5 * torch.sum(emb ** 2, dim=-1))
        self.p = norm
        self.cp = norm[self.indices]
        cumsum = self.cp[0:3].cumsum(0)
        self.cp[0:3] = cumsum / cumsum[-1]
        return self.p.sum() + self.cp.sum()


# flag-exclusive-alias (buctoolkit: the optimisers' scatter-backs Dimer.py:421-424, Krylov.py:361-363, :924,
# :1235-1238, FIRE.py:261, :263; the Ritz-state scatter-backs _eigen_solver.py:475, :476, :478, :940 and their legacy
# copies; _line_search.py:584): the owner is bound to the working tensor only in the hold branch (`self.v = self._v`),
# where nothing is written; in the other branch `index_copy_` saves the working tensor and writes the owner, a
# different tensor. The flag does not change between the calls (and were the two one tensor, index_copy_ would refuse
# the overlap in the forward).
class Scatter:
    def __init__(self, hold: bool, n: int):
        self.hold = hold
        self.v = torch.zeros(n)

    def commit(self, idx: Tensor):
        if self.hold:
            self.v = self._v
        else:
            self.v.index_copy_(0, idx, self._v)


class ScatterControl:  # the owner is the saved source: the working tensor is written in place after the scatter
    def __init__(self, hold: bool, n: int):
        self.hold = hold
        self.v = torch.zeros(n)

    def commit(self, idx: Tensor):
        self.v.index_copy_(0, idx, self._v)
        self._v.mul_(2.0)


# comparison-only-saver, through a helper method (buctoolkit CG.py:108, :136, :160, :184; _eigen_solver.py:894 and
# TS_old/Dimer.py:453): `beta * gp` in the helper saves beta, and `masked_fill_` writes beta, but the product only
# feeds `>=` (a bool the helper returns), so no backward reaches its node.
class CG:
    @staticmethod
    def _check_restart(gg: Tensor, g: Tensor, p: Tensor, beta: Tensor) -> Tensor:
        gp = torch.sum(g * p, dim=-1, keepdim=True)
        return (-gg + beta * gp) >= 0.0

    def direction(self, g: Tensor, g_old: Tensor, p: Tensor) -> Tensor:
        gogo = torch.sum(g_old * g_old, dim=-1, keepdim=True)
        gg = torch.sum(g * g, dim=-1, keepdim=True)
        beta = gg / gogo
        is_restart = self._check_restart(gg, g, p, beta)
        beta.masked_fill_(is_restart, 0.0)
        return -g + beta * p


class CGControl:  # the helper's product also reaches the result
    @staticmethod
    def _restart_value(gg: Tensor, g: Tensor, p: Tensor, beta: Tensor) -> Tensor:
        gp = torch.sum(g * p, dim=-1, keepdim=True)
        return -gg + beta * gp

    def direction(self, g: Tensor, g_old: Tensor, p: Tensor) -> Tensor:
        gogo = torch.sum(g_old * g_old, dim=-1, keepdim=True)
        gg = torch.sum(g * g, dim=-1, keepdim=True)
        beta = gg / gogo
        value = self._restart_value(gg, g, p, beta)
        beta.masked_fill_(value >= 0.0, 0.0)
        return -g + beta * p + value


# out-call-aborts-forward (buctoolkit QN.py:213): `d * y` saves y and `y.add_` writes it, but the method then updates
# its buffer with `torch.addmm(..., out=h)` from operands that carry the grad: an `out=` call refuses them in the
# forward, and the method hands nothing back, so no backward can run. Without grad nothing is saved.
def out_probe(d: Tensor, y: Tensor, h: Tensor) -> None:
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)
    torch.addmm(h, y.unsqueeze(1), d.unsqueeze(0) / sy, out=h)


def out_control(d: Tensor, y: Tensor, h: Tensor) -> Tensor:  # the update handed back instead of written out=
    y = y - 0.0
    sy = (d * y).sum()
    y.add_(0.1 * d)
    return torch.addmm(h, y.unsqueeze(1), d.unsqueeze(0) / sy)


def main():
    from _probe_run import raises, runs

    def refused(f):  # the contract's input: the assert refuses a that requires grad
        try:
            f()
        except AssertionError:
            return "refused (assert)"
        return "NOT REFUSED"

    a = torch.randn(20) * 1e-4
    b = torch.randn(20, requires_grad=True)
    print("requires-grad-guard assert probe", runs(lambda: assert_probe(a, b).sum().backward()))
    print("requires-grad-guard assert probe, a that requires grad",
          refused(lambda: assert_probe(a.clone().requires_grad_(), b)))
    print("requires-grad-guard assert control",
          raises(lambda: assert_control(a.clone().requires_grad_(), b).sum().backward()))

    def logit():
        return torch.randn(4, 9, requires_grad=True)

    pos = torch.tensor([[1], [2], [3], [4]])
    print("non-differentiable-sink detach probe", runs(lambda: detach_probe(logit(), pos)[1].sum().backward()))
    print("non-differentiable-sink detach control",
          raises(lambda: sum(t.sum() for t in detach_control(logit(), pos)).backward()))

    def emb():
        return torch.randn(8, 4, requires_grad=True)

    print("attribute-index-read-as-view probe", runs(lambda: Sampler(8).update(emb()).backward()))
    print("attribute-index-read-as-view control", raises(lambda: SliceSampler(8).update(emb()).backward()))

    def scatter(cls, hold):
        leaf = torch.rand(3, requires_grad=True)
        s = cls(hold, 6)
        for _ in range(2):  # two iterations, the working tensor rebound before each commit
            s._v = leaf * 2.0
            s.commit(torch.tensor([0, 2, 5]))
        return s.v.sum()

    print("flag-exclusive-alias probe", runs(lambda: scatter(Scatter, False).backward()))
    print("flag-exclusive-alias probe, hold", runs(lambda: scatter(Scatter, True).backward()))
    print("flag-exclusive-alias control", raises(lambda: scatter(ScatterControl, False).backward()))

    def cg(cls):
        g = torch.randn(4, 3, requires_grad=True)
        return cls().direction(g, torch.randn(4, 3), torch.randn(4, 3, requires_grad=True)).sum()

    print("comparison-only-saver helper probe", runs(lambda: cg(CG).backward()))
    print("comparison-only-saver helper control", raises(lambda: cg(CGControl).backward()))

    def refused_out(f):
        try:
            f()
        except RuntimeError as exc:
            if "out=" in str(exc):
                return "refused (out=)"
            raise
        return "NOT REFUSED"

    def dy():
        return torch.randn(3, requires_grad=True), torch.randn(3)

    print("out-call-aborts-forward probe", refused_out(lambda: out_probe(*dy(), torch.eye(3))))
    with torch.no_grad():
        print("out-call-aborts-forward probe, no grad", runs(lambda: out_probe(*dy(), torch.eye(3))))
    print("out-call-aborts-forward control", raises(lambda: out_control(*dy(), torch.eye(3)).sum().backward()))


if __name__ == "__main__":
    main()
