# torch_geometric/nn/conv/cg_conv.py as of the parent of commit 5b1051fca (PR #5353): CGConv (the culprit:
# `out += x[1]` on the aggregated messages), with torch_geometric/utils/scatter.py's scatter_reduce path as PR #5353
# leaves it (the `out.clone()` workaround of PR #5120 removed, the scatter_reduce_ output returned).
# Stand-ins: MessagePassing.propagate is written out for this layer (gather x_i = x[1][dst], x_j = x[0][src],
# message, scatter-sum into the target nodes through `scatter`); torch_geometric's experimental 'scatter_reduce'
# mode is taken as on; no batch norm.
from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Linear


def scatter(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
            dim_size: Optional[int] = None, reduce: str = 'sum') -> Tensor:
    reduce = 'sum' if reduce == 'add' else reduce
    # Broadcast `index`:
    dim = src.dim() + dim if dim < 0 else dim
    if index.dim() == 1:
        for _ in range(0, dim):
            index = index.unsqueeze(0)
    for _ in range(index.dim(), src.dim()):
        index = index.unsqueeze(-1)
    index = index.expand(src.size())

    include_self = out is not None

    if out is None:  # Generate `out` if not given:
        size = list(src.size())
        if dim_size is not None:
            size[dim] = dim_size
        elif index.numel() > 0:
            size[dim] = int(index.max()) + 1
        else:
            size[dim] = 0
        out = src.new_zeros(size)

    return out.scatter_reduce_(dim, index, src, reduce,
                               include_self=include_self)


class CGConv(torch.nn.Module):
    def __init__(self, channels: Union[int, Tuple[int, int]], dim: int = 0,
                 aggr: str = 'add', batch_norm: bool = False,
                 bias: bool = True, **kwargs):
        super().__init__()
        self.aggr = aggr
        self.channels = channels
        self.dim = dim
        self.batch_norm = batch_norm

        if isinstance(channels, int):
            channels = (channels, channels)

        self.lin_f = Linear(sum(channels) + dim, channels[1], bias=bias)
        self.lin_s = Linear(sum(channels) + dim, channels[1], bias=bias)
        self.bn = None

    def propagate(self, edge_index, x, edge_attr, size=None):
        src, dst = edge_index
        msg = self.message(x[1][dst], x[0][src], edge_attr)
        return scatter(msg, dst, dim=0, dim_size=x[1].size(0), reduce=self.aggr)

    def forward(self, x, edge_index, edge_attr=None) -> Tensor:
        """"""
        if isinstance(x, Tensor):
            x = (x, x)

        # propagate_type: (x: PairTensor, edge_attr: OptTensor)
        out = self.propagate(edge_index, x=x, edge_attr=edge_attr, size=None)
        out = out if self.bn is None else self.bn(out)
        out += x[1]
        return out

    def message(self, x_i, x_j, edge_attr) -> Tensor:
        if edge_attr is None:
            z = torch.cat([x_i, x_j], dim=-1)
        else:
            z = torch.cat([x_i, x_j, edge_attr], dim=-1)
        return self.lin_f(z).sigmoid() * F.softplus(self.lin_s(z))
