"""Stop 56 (fresh56, end of stop): one small program per false group of the proven tier found on the code bases
first measured by fresh56. The merged main proves each `probe` (`inplacefix check fresh56_probes.py`), and each
probe runs backward fine, or has nothing that can require grad (`python fresh56_probes.py`); each has a control,
the same code with what makes it safe taken away, that raises."""

import torch
from torch import Tensor


# integer-dtype-scatter (dagua layout/multilevel.py:436, :437): `min_neighbor` is built with `dtype=index_dtype`
# and filled by `scatter_reduce_(..., reduce="amin")` with node ids: the same tensors are the scatter's index, so
# the dtype is an integer one, nothing can require grad, and nothing is saved. The check reads the amin scatter as
# saving its result (the tensor the mirror scatter then writes).
def int_probe(edge_index: Tensor, num_nodes: int, index_dtype: torch.dtype) -> Tensor:
    min_neighbor = torch.full((num_nodes,), num_nodes, dtype=index_dtype)
    src = edge_index[0].to(dtype=index_dtype)
    tgt = edge_index[1].to(dtype=index_dtype)
    min_neighbor.scatter_reduce_(0, src, tgt, reduce="amin")
    min_neighbor.scatter_reduce_(0, tgt, src, reduce="amin")
    return min_neighbor


def int_control(edge_index: Tensor, values: Tensor, num_nodes: int) -> Tensor:  # float values that require grad
    out = torch.zeros((num_nodes,), dtype=values.dtype)
    out.scatter_reduce_(0, edge_index[0], values, reduce="amin")
    out.scatter_reduce_(0, edge_index[1], values, reduce="amin")
    return out


# advanced-index-read-as-view (pykaira fec/decoders/belief_propagation_polar.py:152, :153, :226, :227): `mask =
# self.mask_dict` is an integer tensor and `mask[i]` a row of it, so `R[:, i, mask[i]]` is an advanced-index copy;
# `torch.abs` saves that copy, not R, and the write `R[:, i + 1, mask[i]] = ...` touches nothing saved (likewise
# `right[not_satisfied]` with `not_satisfied = torch.arange(...)`). The check reads the subscript as a view of R.
def min_sum(x: Tensor, y: Tensor) -> Tensor:
    return torch.sign(x) * torch.sign(y) * torch.min(torch.abs(x), torch.abs(y))


class Decoder:
    def __init__(self):
        self.mask_dict = torch.tensor([[0, 2], [1, 3]])

    def update(self, R, L):
        mask = self.mask_dict
        for i in range(2):
            R[:, i + 1, mask[i]] = min_sum(R[:, i, mask[i]], L[:, i + 1, mask[i]])
        return R

    def decode(self, llr: Tensor) -> Tensor:
        R = torch.zeros(llr.shape[0], 3, 4)
        L = torch.zeros_like(R)
        L[:, -1, :] = llr
        for _ in range(2):
            R = self.update(R, L)
        return R


class SliceDecoder:  # control: the index is a slice, so `R[:, i, 0:2]` is a view of R that abs saves
    def update(self, R, L):
        for i in range(2):
            R[:, i + 1, 0:2] = min_sum(R[:, i, 0:2], L[:, i + 1, 0:2])
        return R

    def decode(self, llr: Tensor) -> Tensor:
        R = torch.zeros(llr.shape[0], 3, 4)
        L = torch.zeros_like(R)
        L[:, -1, :] = llr
        for _ in range(2):
            R = self.update(R, L)
        return R


def main():
    from _probe_run import raises, runs

    edges = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 2]])

    def ints(dtype):
        out = int_probe(edges, 5, dtype)
        assert not out.requires_grad and out.tolist() == [1, 0, 0, 2, 3]

    print("integer-dtype-scatter probe, int32", runs(lambda: ints(torch.int32)))
    print("integer-dtype-scatter probe, int64", runs(lambda: ints(torch.int64)))
    print("integer-dtype-scatter control", raises(
        lambda: int_control(edges, torch.rand(5, requires_grad=True), 5).sum().backward()))

    def decode(cls):
        llr = torch.randn(2, 4, requires_grad=True)
        (cls().decode(llr) * torch.arange(24.0).reshape(2, 3, 4)).sum().backward()
        assert llr.grad is not None

    print("advanced-index-read-as-view probe", runs(lambda: decode(Decoder)))
    print("advanced-index-read-as-view control", raises(lambda: decode(SliceDecoder)))


if __name__ == "__main__":
    main()
