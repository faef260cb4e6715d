"""Stop 51 (prec51b): one small program per false group of the proven tier found on the never-measured code
bases of this stop (main d1b4fd6 proves each `probe` function; each runs backward fine), with a control
that raises (the same code with what makes it safe taken away). `python prec51b_probes.py` runs them all;
`inplacefix check prec51b_probes.py` shows the findings (the controls are proven too, rightly)."""

import numpy as np
import torch
from torch import nn


# unknown-call-operand (agilerl neural_ts_bandit.py:286, neural_ucb_bandit.py:287): a tensor built from constants
# divided by the result of a call the analysis does not resolve (np.sqrt of a parameter's size; np.sqrt(4) or an
# imported helper alike) is read as requiring grad, so `s @ v` is proven to save s for v's gradient.
class Bandit:
    def __init__(self, n):
        self.layer = nn.Linear(n, 2)
        self.sigma_inv = 0.1 * torch.eye(n)

    def probe(self, n):
        g = torch.ones(n) / np.sqrt(self.layer.weight.size(0))
        v = g.unsqueeze(-1)
        self.sigma_inv -= (self.sigma_inv @ v @ v.T @ self.sigma_inv)
        return self.sigma_inv

    def control(self, n):
        g = torch.ones(n).requires_grad_() / np.sqrt(self.layer.weight.size(0))
        v = g.unsqueeze(-1)
        self.sigma_inv -= (self.sigma_inv @ v @ v.T @ self.sigma_inv)
        return self.sigma_inv


# item-return (catalyst _cmc_score.py:168, deeprobust utils.py:345): a saved output is written, but all that
# leaves the function is a Python number (`.item()`), so its backward can never run.
def margin_probe(output, label):
    probs = torch.exp(output)
    true = probs[label].clone()
    probs[label] = 0
    return (true - probs[probs.argmax()]).item()


def margin_control(output, label):
    probs = torch.exp(output)
    true = probs[label].clone()
    probs[label] = 0
    return true - probs[probs.argmax()]


# requires-grad-guard (palm_rlhf_pytorch palm.py:63): the in-place add runs only when neither tensor requires
# grad (`if not any(t.requires_grad for t in (x, y))`), so no graph holds x.
class Residual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fn = nn.LayerNorm(dim)

    def forward(self, x):
        y = self.fn(x)
        if not any([t.requires_grad for t in (x, y)]):
            return x.add_(y)
        return y + x


class ResidualControl(Residual):
    def forward(self, x):
        y = self.fn(x)
        return x.add_(y)


# where-tuple-index (deeprobust airgnn.py:168): `index = torch.where(mask)` is a tuple of index tensors, so
# `score[index]` is a copy; the division saves the copy, and clamp saves its input, not score.
def l21_probe(x, lam):
    row_norm = torch.norm(x, p=2, dim=1)
    score = torch.clamp(row_norm - lam, min=0)
    index = torch.where(row_norm > 0)
    score[index] = score[index] / row_norm[index]
    return score.unsqueeze(1) * x


def l21_control(x, lam):
    row_norm = torch.norm(x, p=2, dim=1)
    score = torch.clamp(row_norm - lam, min=0)
    score[1:] = score[1:] / row_norm[1:]
    return score.unsqueeze(1) * x


def _outcome(fn):
    try:
        fn()
        return "runs"
    except RuntimeError as exc:
        return "raises: " + str(exc).splitlines()[0][:90]


def main():
    torch.manual_seed(0)
    lin = nn.Linear(4, 3)

    def logp():
        return torch.log_softmax(lin(torch.randn(4)), dim=-1)

    def x_in():
        return (torch.randn(4, 3, requires_grad=True) * 1.0)

    cases = {
        "Bandit.probe (no grad: nothing to backward)": lambda: Bandit(3).probe(3).grad_fn,
        "Bandit.control": lambda: Bandit(3).control(3).sum().backward(),
        "margin_probe": lambda: (margin_probe(logp(), 1), lin.weight.sum().backward()),
        "margin_control": lambda: margin_control(logp(), 1).backward(),
        "Residual": lambda: Residual(3)(x_in()).sum().backward(),
        "Residual (no grad anywhere)": lambda: Residual(3).requires_grad_(False)(torch.randn(4, 3)),
        "ResidualControl": lambda: ResidualControl(3)(x_in()).sum().backward(),
        "l21_probe": lambda: l21_probe(x_in(), 0.1).sum().backward(),
        "l21_control": lambda: l21_control(x_in(), 0.1).sum().backward(),
    }
    for name, fn in cases.items():
        print(f"{name}: {_outcome(fn)}")


if __name__ == "__main__":
    main()
