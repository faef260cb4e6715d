# torch_scatter 2.0.3 (rusty1s/pytorch_scatter), reduced: torch_scatter/utils.py broadcast(),
# torch_scatter/composite/softmax.py scatter_softmax() as released (before commit cf8cf0c "fix backward pass").
# scatter_sum / scatter_max are the compiled ops of the package; here pure-torch stand-ins with the same call shape.
from typing import Optional, Tuple

import torch


def broadcast(src: torch.Tensor, other: torch.Tensor, dim: int):
    if dim < 0:
        dim = other.dim() + dim
    if src.dim() == 1:
        for _ in range(0, dim):
            src = src.unsqueeze(0)
    for _ in range(src.dim(), other.dim()):
        src = src.unsqueeze(-1)
    src = src.expand_as(other)
    return src


def scatter_sum(src: torch.Tensor, index: torch.Tensor, dim: int = -1,
                dim_size: Optional[int] = None) -> torch.Tensor:
    index = broadcast(index, src, dim)
    size = list(src.size())
    size[dim] = int(index.max()) + 1 if dim_size is None else dim_size
    out = torch.zeros(size, dtype=src.dtype, device=src.device)
    return out.scatter_add(dim, index, src)


def scatter_max(src: torch.Tensor, index: torch.Tensor, dim: int = -1,
                dim_size: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    index = broadcast(index, src, dim)
    size = list(src.size())
    size[dim] = int(index.max()) + 1 if dim_size is None else dim_size
    out = torch.full(size, float("-inf"), dtype=src.dtype, device=src.device)
    out = out.scatter_reduce(dim, index, src, reduce="amax", include_self=True)
    return out, index  # arg-max not needed here


def scatter_softmax(src: torch.Tensor, index: torch.Tensor, dim: int = -1,
                    eps: float = 1e-12) -> torch.Tensor:
    if not torch.is_floating_point(src):
        raise ValueError('`scatter_softmax` can only be computed over tensors '
                         'with floating point data types.')

    index = broadcast(index, src, dim)

    max_value_per_index = scatter_max(src, index, dim=dim)[0]
    max_per_src_element = max_value_per_index.gather(dim, index)

    recentered_scores = src - max_per_src_element
    recentered_scores_exp = recentered_scores.exp_()

    sum_per_index = scatter_sum(recentered_scores_exp, index, dim)
    normalizing_constants = sum_per_index.add_(eps).gather(dim, index)

    return recentered_scores_exp.div_(normalizing_constants)
