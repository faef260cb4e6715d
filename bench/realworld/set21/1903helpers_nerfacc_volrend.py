# nerfacc/volrend.py and nerfacc/scan.py as of the parent of commit 5cea4fe ("Fix inplace prefix_trans"):
# exclusive_prod, render_transmittance_from_alpha and render_weight_from_alpha, copied.
# The culprit: `trans *= prefix_trans` on the output of exclusive_prod, whose batched branch is torch.cumprod
# (CumprodBackward saves its result; the flattened branches' custom _ExclusiveProd saves `outputs` as well).
# Stand-ins: `is_cub_available()` (nerfacc.cuda, the compiled extension) returns True, as on a CUDA build with CUB:
# without it the batched call would go to pack_info(None), which asserts. The flattened branches of exclusive_prod
# (packed_info / indices, CUDA kernels) are cut: the case renders batched rays (n_rays, n_samples).
from typing import Optional, Tuple

import torch
from torch import Tensor


def is_cub_available() -> bool:  # stand-in for nerfacc.cuda.is_cub_available
    return True


def pack_info(ray_indices: Tensor, n_rays: Optional[int] = None) -> Tensor:  # stand-in: CUDA only upstream
    raise NotImplementedError("Only support cuda inputs.")


def exclusive_prod(
    inputs: Tensor,
    packed_info: Optional[Tensor] = None,
    indices: Optional[Tensor] = None,
) -> Tensor:
    """Exclusive Product that supports flattened tensor (batched branch only, see the header)."""

    if indices is not None and packed_info is not None:
        raise ValueError(
            "Only one of `indices` and `packed_info` can be specified."
        )

    if indices is not None or packed_info is not None:
        raise NotImplementedError("flattened branches need nerfacc's CUDA kernels (cut from the case)")

    if indices is None and packed_info is None:
        # Batched exclusive product on the last dimension.
        outputs = torch.cumprod(
            torch.cat(
                [torch.ones_like(inputs[..., :1]), inputs[..., :-1]], dim=-1
            ),
            dim=-1,
        )

    return outputs


def render_transmittance_from_alpha(
    alphas: Tensor,
    packed_info: Optional[Tensor] = None,
    ray_indices: Optional[Tensor] = None,
    n_rays: Optional[int] = None,
    prefix_trans: Optional[Tensor] = None,
) -> Tensor:
    """Compute transmittance :math:`T_i` from alpha :math:`\\alpha_i`."""
    # FIXME Try not to use exclusive_prod because:
    # 1. torch.cumprod is much slower than torch.cumsum
    # 2. exclusive_prod gradient on input == 0 is not correct.
    if not is_cub_available() and packed_info is None:
        # Convert ray indices to packed info
        packed_info = pack_info(ray_indices, n_rays)
        ray_indices = None

    trans = exclusive_prod(
        1 - alphas, packed_info=packed_info, indices=ray_indices
    )
    if prefix_trans is not None:
        trans *= prefix_trans
    return trans


def render_weight_from_alpha(
    alphas: Tensor,
    packed_info: Optional[Tensor] = None,
    ray_indices: Optional[Tensor] = None,
    n_rays: Optional[int] = None,
    prefix_trans: Optional[Tensor] = None,
) -> Tuple[Tensor, Tensor]:
    """Compute rendering weights :math:`w_i` from opacity :math:`\\alpha_i`."""
    trans = render_transmittance_from_alpha(
        alphas, packed_info, ray_indices, n_rays, prefix_trans
    )
    weights = trans * alphas
    return weights, trans
