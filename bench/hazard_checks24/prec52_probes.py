"""Stop 52 (fresh52): one small program per false group of the proven tier found on the code bases first measured
at stop 52. Main 97a004a proves each `probe` (`inplacefix check prec52_probes.py`), and each probe runs backward
fine (`python prec52_probes.py`); each has a control, the same code with what makes it safe taken away, that raises
(the controls are proven too, rightly)."""

import torch
from torch import nn


# min-index-only (rl4co pdp/generator.py:131, :132, tsp/generator.py:87): the norm's output is written, but all that
# leaves it is `dists.min(-1)[1]`, the index half of a `min(dim)`: an int64 tensor, so no backward can reach norm.
# (`dists.argmin(-1)` in its place is not proven: argmin is known to drop the history; `min(dim)[1]` is not.)
def greedy_probe(coords):
    n = coords.size(1)
    candidates = torch.ones(coords.size(0), n, dtype=torch.bool)
    selected = torch.zeros(coords.size(0), 1, dtype=torch.long)
    rec = torch.zeros(coords.size(0), n, dtype=torch.long)
    for _ in range(n - 1):
        d1 = coords.gather(1, selected.unsqueeze(-1).expand(-1, n, 2))
        dists = (d1 - coords).norm(p=2, dim=2)
        dists[~candidates] = 1e5
        nxt = dists.min(-1)[1].view(-1, 1)
        rec.scatter_(1, selected, nxt)
        candidates.scatter_(1, nxt, False)
        selected = nxt
    return rec


def greedy_control(coords):
    n = coords.size(1)
    candidates = torch.ones(coords.size(0), n, dtype=torch.bool)
    selected = torch.zeros(coords.size(0), 1, dtype=torch.long)
    total = coords.new_zeros(())
    for _ in range(n - 1):
        d1 = coords.gather(1, selected.unsqueeze(-1).expand(-1, n, 2))
        dists = (d1 - coords).norm(p=2, dim=2)
        dists[~candidates] = 1e5
        best, nxt = dists.min(-1)
        total = total + best.sum()
        nxt = nxt.view(-1, 1)
        candidates.scatter_(1, nxt, False)
        selected = nxt
    return total


# data-assignment-sink (graph-pes models/eddp.py:358): std's output is written, but it leaves only through
# `self.scales.data = _std`, which carries no history: the std node is never reached by a backward.
class Scaled(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Linear(3, n)
        self.shifts = nn.Parameter(torch.zeros(n))
        self.scales = nn.Parameter(torch.ones(n))

    def featurise(self, pos):
        return torch.cat([self.w(pos).tanh(), torch.ones(pos.size(0), 1)], dim=1)

    def pre_fit(self, pos):
        X = self.featurise(pos)
        _mean = X.mean(dim=0)
        _std = X.std(dim=0)
        _std[torch.isnan(_std) | (_std < 1e-6)] = 1
        self.shifts.data = _mean
        self.scales.data = _std

    def forward(self, pos):
        return (self.featurise(pos) - self.shifts) / self.scales

    def pre_fit_control(self, pos):
        X = self.featurise(pos)
        _std = X.std(dim=0)
        _std[torch.isnan(_std) | (_std < 1e-6)] = 1
        return (X / _std).sum()


# isinstance-list-arm (colossalai legacy/communication/p2p.py:181, :190): a helper returns one leaf requiring grad
# for a torch.Size and a list of them otherwise; the flagged `buf[i] = ...` sits in the `else` arm of
# `if isinstance(buf, torch.Tensor):`, where buf is the list: a Python list item assignment, no tensor written.
def make_buffer(shapes):
    if isinstance(shapes, torch.Size):
        return torch.empty(shapes, requires_grad=True)
    out = []
    for s in shapes:
        out.append(torch.zeros(s, requires_grad=True))
    return out


def recv_probe(shapes):
    buf = make_buffer(shapes)
    if isinstance(buf, torch.Tensor):
        buf = buf.detach().view(-1).requires_grad_()
    else:
        for i in range(len(buf)):
            buf[i] = buf[i].detach().view(-1).requires_grad_()
    return buf


def recv_control(shape):
    buf = torch.zeros(shape, requires_grad=True)
    buf[0] = 1.0
    return buf


# float-attribute-operand (mani-skill rotate_single_object_in_hand.py:170; a cousin of label51c's init-param-operand):
# the noise is a float constructor parameter (default 0.02) and `hand_height` a float class attribute; nothing
# requires grad, so abs records nothing. Bisected on 97a004a: proven only with both, the constructor parameter in the
# product and the class attribute in the written value; `self.noise = 0.02` in __init__, or `+ 0.25` for
# `+ self.hand_height`, or both attributes constructor parameters, and it is not proven.
class Env:
    hand_height = 0.25

    def __init__(self, noise=0.02):
        self.noise = noise

    def probe(self, b):
        new_pos = torch.randn((b, 3)) * self.noise
        new_pos[:, 2] = torch.abs(new_pos[:, 2]) + self.hand_height
        return new_pos


# frozen-parameter-attribute (torchkeras vision/ssd.py:411, :412, :420): `self.d = nn.Parameter(..., requires_grad=False)`
# in __init__; the check reads `self.d[:, :, 2:]` as requiring grad, so `b[:, :, :2] * self.d[...]` would save
# `b`'s slice for d's gradient. With d frozen the product saves only d: nothing of `b` is saved.
class Post(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.d = nn.Parameter(d.unsqueeze(dim=0),
                              requires_grad=False)
        self.s = 0.1

    def probe(self, b):
        b = b.permute(0, 2, 1)
        b[:, :, :2] = self.s * b[:, :, :2]
        b[:, :, :2] = b[:, :, :2] * self.d[:, :, 2:] + self.d[:, :, :2]
        return b


if __name__ == "__main__":
    from _probe_run import raises, runs

    c = torch.rand(3, 6, 2, requires_grad=True)
    print("min-index-only probe", runs(lambda: (greedy_probe(c).float().sum() + (c * 2).sum()).backward()))
    print("min-index-only control", raises(lambda: greedy_control(c).backward()))
    m, pos = Scaled(4), torch.randn(6, 3, requires_grad=True)
    print("data-assignment-sink probe", runs(lambda: (m.pre_fit(pos), m(pos).pow(2).sum().backward())))
    print("data-assignment-sink control", raises(lambda: m.pre_fit_control(pos).backward()))
    print("isinstance-list-arm probe", runs(lambda: sum(t.sum() for t in recv_probe([torch.Size([2, 3]), torch.Size([4])])).backward()))
    print("isinstance-list-arm control", raises(lambda: recv_control(torch.Size([2, 3])).sum().backward()))
    env = Env()
    out = env.probe(4)
    print("float-attribute-operand probe", "runs (requires grad: %s, nothing to backpropagate)" % out.requires_grad)
    env_t = Env(torch.tensor(0.02, requires_grad=True))
    print("float-attribute-operand control", raises(lambda: env_t.probe(4).sum().backward()))
    post = Post(torch.rand(5, 4))
    print("frozen-parameter-attribute probe", runs(lambda: post.probe(torch.randn(2, 4, 5, requires_grad=True) * 1).sum().backward()))
    post.d.requires_grad_(True)
    print("frozen-parameter-attribute control (d requiring grad)",
          raises(lambda: post.probe(torch.randn(2, 4, 5, requires_grad=True) * 1).sum().backward()))
