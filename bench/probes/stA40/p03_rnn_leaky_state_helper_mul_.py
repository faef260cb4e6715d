# source: own knowledge (reservoir / leaky-integrator RNNs that update the state with a helper)
# error: A
# tanh saves its result; the helper decays and adds to the state in place.
import torch
import torch.nn as nn
from p03helpers_cells import leaky_update


def compute():
    torch.manual_seed(0)
    inp = nn.Linear(3, 6)
    rec = nn.Linear(6, 6)
    xs = torch.randn(4, 2, 3)
    h = torch.tanh(inp(xs[0]))
    h = leaky_update(h, rec(h), 0.9)
    h.pow(2).sum().backward()


if __name__ == "__main__":
    compute()
