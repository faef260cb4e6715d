"""Stop 57 (fresh57, end of stop): one small program per false group of the proven tier found on the code bases
first measured by fresh57. The merged main proves each `probe` (`inplacefix check fresh57_probes.py`), and each
probe runs backward fine, or stops in the forward before any backward (`python fresh57_probes.py`); each has a
control, the same code with what makes it safe taken away, that raises the in-place error at backward."""

import torch
from torch import Tensor


# index-only-saver (torchpq clustering/*KMeans*.py kmeanspp: `centroids[:, i] = new_centroid`, 5 lines): the
# similarities that saved `current_centroids` (a slice of centroids) reach only `.max(dim=1)` and `.argmin()`, an
# integer index, so no backward ever reads what they saved; the centroid write spoils nothing that is used.
def pick_probe(data: Tensor, k: int) -> Tensor:
    centroids = torch.zeros(data.shape[0], k)
    centroids[:, 0] = data[:, 0]
    for i in range(1, k):
        current = centroids[:, :i]
        sims = data.transpose(0, 1) @ current
        values, _ = sims.max(dim=1)
        index = values.argmin(dim=0)
        centroids[:, i] = data[:, index]
    return centroids


def pick_control(data: Tensor, k: int) -> Tensor:  # the similarities are returned: their backward reads current
    centroids = torch.zeros(data.shape[0], k)
    centroids[:, 0] = data[:, 0]
    total = torch.zeros(())
    for i in range(1, k):
        current = centroids[:, :i]
        sims = data.transpose(0, 1) @ current
        values, _ = sims.max(dim=1)
        total = total + values.sum()
        index = values.argmin(dim=0)
        centroids[:, i] = data[:, index]
    return centroids.sum() + total


# out-call-aborts-forward, through a helper (torchvine tll_fit.py:124, :125, :138, :144, `ace`): the column write
# follows a product that saved the column, but every path then hands `phi[:, 0] * w` to a helper whose
# `torch.cumsum(..., out=...)` refuses an operand that requires grad, in the forward: the only grad comes from w, so
# no use gets to backward.
def _smooth(x: Tensor) -> Tensor:
    csum = torch.empty(x.numel() + 1, dtype=x.dtype)
    csum[0] = 0.0
    torch.cumsum(x, dim=0, out=csum[1:])
    return csum[1:] - csum[:-1]


def _ranks(data: Tensor) -> Tensor:  # integers: nothing here can require grad
    n = int(data.shape[0])
    order = torch.argsort(data[:, 0])
    inv = torch.empty((n,), dtype=torch.long)
    inv[order] = torch.arange(n)
    return torch.stack([inv.to(data.dtype), inv.to(data.dtype)], dim=1)


def ace_probe(data: Tensor, weights: Tensor) -> Tensor:
    w = torch.as_tensor(weights, dtype=data.dtype)
    phi = _ranks(data).clone()
    phi = phi - 1.0
    phi[:, 0] = phi[:, 0] * w
    for _ in range(3):
        phi[:, 1] = _smooth(phi[:, 0] * w)
    return phi


def _smooth_control(x: Tensor) -> Tensor:
    csum = torch.cat([torch.zeros(1, dtype=x.dtype), torch.cumsum(x, dim=0)])
    return csum[1:] - csum[:-1]


def ace_control(data: Tensor, weights: Tensor) -> Tensor:  # the helper's cumsum out of place: the writes raise
    w = torch.as_tensor(weights, dtype=data.dtype)
    phi = _ranks(data).clone()
    phi = phi - 1.0
    phi[:, 0] = phi[:, 0] * w
    for _ in range(3):
        phi[:, 1] = _smooth_control(phi[:, 0] * w)
    return phi


def main():
    from _probe_run import raises, runs

    def pick(fn):
        x = torch.randn(3, 8, requires_grad=True)
        fn(x * 1, 3).sum().backward()
        assert x.grad is not None

    print("index-only-saver probe", runs(lambda: pick(pick_probe)))
    print("index-only-saver control", raises(lambda: pick(pick_control)))

    data = torch.rand(5, 2, requires_grad=True)

    def ace(fn):
        w = torch.rand(5, requires_grad=True)
        fn(data, w * 1).sum().backward()

    print("out-call-aborts-forward probe, data that requires grad, plain weights",
          runs(lambda: ace_probe(data * 1, torch.rand(5)).sum()))
    try:
        ace(ace_probe)
        print("out-call-aborts-forward probe: ran to backward (unexpected)")
    except RuntimeError as exc:
        assert "out=" in str(exc), exc
        print("out-call-aborts-forward probe: stops in the forward:", str(exc).splitlines()[0][:90])
    print("out-call-aborts-forward control", raises(lambda: ace(ace_control)))


if __name__ == "__main__":
    main()
