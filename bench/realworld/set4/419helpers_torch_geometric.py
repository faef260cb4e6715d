# Minimal torch_geometric pieces used by the "Creating Message Passing Networks" docs example (PyG 2.5 era):
# utils.scatter (torch_geometric/utils/_scatter.py, CPU path: 'sum' via scatter_add_, 'min'/'max' via
# scatter_reduce_ without a clone), utils.add_self_loops, utils.degree, and a MessagePassing base class reduced
# to propagate -> message -> aggregate -> update for the x_j / norm arguments the example uses.
import torch
from torch import Tensor


def broadcast(src: Tensor, ref: Tensor, dim: int) -> Tensor:
    size = ((1, ) * dim) + (-1, ) + ((1, ) * (ref.dim() - dim - 1))
    return src.view(size).expand_as(ref)


def scatter(src: Tensor, index: Tensor, dim: int = 0, dim_size=None, reduce: str = 'sum') -> Tensor:
    dim = src.dim() + dim if dim < 0 else dim
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    size = list(src.size())
    size[dim] = dim_size
    if reduce == 'sum' or reduce == 'add':
        index = broadcast(index, src, dim)
        return src.new_zeros(size).scatter_add_(dim, index, src)
    if reduce == 'mean':
        count = src.new_zeros(dim_size)
        count.scatter_add_(0, index, src.new_ones(src.size(dim)))
        count = count.clamp(min=1)
        index = broadcast(index, src, dim)
        out = src.new_zeros(size).scatter_add_(dim, index, src)
        return out / broadcast(count, out, dim)
    if reduce == 'min' or reduce == 'max':
        index = broadcast(index, src, dim)
        return src.new_zeros(size).scatter_reduce_(dim, index, src, reduce=f'a{reduce}', include_self=False)
    raise ValueError(f"Encountered invalid `reduce` argument '{reduce}'")


def add_self_loops(edge_index: Tensor, num_nodes: int):
    loop_index = torch.arange(0, num_nodes, dtype=edge_index.dtype, device=edge_index.device)
    loop_index = loop_index.unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loop_index], dim=1), None


def degree(index: Tensor, num_nodes: int, dtype=None) -> Tensor:
    out = torch.zeros((num_nodes, ), dtype=dtype, device=index.device)
    one = torch.ones((index.size(0), ), dtype=out.dtype, device=out.device)
    return out.scatter_add_(0, index, one)


class MessagePassing(torch.nn.Module):
    def __init__(self, aggr: str = 'add'):
        super().__init__()
        self.aggr = aggr

    def propagate(self, edge_index: Tensor, x: Tensor, norm: Tensor) -> Tensor:
        row, col = edge_index  # source j -> target i ("source_to_target" flow)
        x_j = x.index_select(0, row)
        out = self.message(x_j, norm)
        out = self.aggregate(out, col, dim_size=x.size(0))
        return self.update(out)

    def message(self, x_j: Tensor, norm: Tensor) -> Tensor:
        return x_j

    def aggregate(self, inputs: Tensor, index: Tensor, dim_size: int) -> Tensor:
        return scatter(inputs, index, dim=0, dim_size=dim_size, reduce=self.aggr)

    def update(self, inputs: Tensor) -> Tensor:
        return inputs
