# Look-alike: the state is threaded through the calls but updated out of place.
import torch


def phi(x):
    return torch.nn.functional.elu(x) + 1


def attend_step(q, k, v, state=None):
    q, k = phi(q), phi(k)
    if state is None:
        S = q.new_zeros(q.shape[0], q.shape[1], v.shape[1])
        Z = q.new_zeros(q.shape)
    else:
        S, Z = state
    S = S + torch.einsum("bd,bm->bdm", k, v)
    Z = Z + k
    num = torch.einsum("bd,bdm->bm", q, S)
    den = torch.einsum("bd,bd->b", q, Z)
    return num / den[:, None], [S, Z]


def compute():
    torch.manual_seed(0)
    proj = torch.nn.Linear(4, 12)
    xs = torch.randn(3, 2, 4)
    state = None
    outs = []
    for t in range(3):
        q, k, v = proj(xs[t]).chunk(3, dim=-1)
        y, state = attend_step(q, k, v, state)
        outs.append(y)
    torch.stack(outs).sum().backward()
    return proj.weight.grad
