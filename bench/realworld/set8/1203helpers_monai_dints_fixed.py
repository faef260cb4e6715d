# monai/networks/nets/dints.py after commit 07e14442e ("inplace grads", PR #3344): each child probability divided
# by the block's norm out of place, in one list comprehension.
# Stand-ins: TopologySearch keeps only what get_prob_a reads -- `log_alpha_a` (an nn.Parameter of shape
# [num_blocks, num_paths], `torch.zeros(...).normal_(0, 0.01)` as in the class), `child_list`
# (every non-empty on/off pattern of the paths, the list TopologyConstruction.gen_mtx produces for all children),
# `num_blocks` and `device`; the cell operations and RAM-cost estimates are left out. No numpy in the environment:
# child_list is a torch tensor, so `torch.from_numpy(self.child_list)` reads `self.child_list`.
import itertools

import torch
import torch.nn as nn


class TopologySearch(nn.Module):
    def __init__(self, num_blocks: int = 3, num_depths: int = 2, device: str = "cpu"):
        super().__init__()
        self.num_blocks = num_blocks
        self.num_depths = num_depths
        self.device = device
        num_paths = 3 * num_depths - 2
        child_list = [c for c in itertools.product([0, 1], repeat=num_paths) if any(c)]
        self.child_list = torch.tensor(child_list)
        self.log_alpha_a = nn.Parameter(
            torch.zeros(self.num_blocks, num_paths).normal_(0, 0.01).to(self.device).requires_grad_()
        )

    def get_prob_a(self, child: bool = False):
        """
        Get final path and child model probabilities from architecture weights `log_alpha_a`.
        This is used in forward pass, getting training loss, and final decoding.
        """
        _arch_code_prob_a = torch.sigmoid(self.log_alpha_a)
        # remove the case where all path are zero, and re-normalize.
        norm = 1 - (1 - _arch_code_prob_a).prod(-1)
        arch_code_prob_a = _arch_code_prob_a / norm.unsqueeze(1)
        if child:
            path_activation = self.child_list.to(self.device)
            probs_a = [
                (
                    path_activation * _arch_code_prob_a[blk_idx]
                    + (1 - path_activation) * (1 - _arch_code_prob_a[blk_idx])
                ).prod(-1)
                / norm[blk_idx]
                for blk_idx in range(self.num_blocks)
            ]
            probs_a = torch.stack(probs_a)  # type: ignore
            return probs_a, arch_code_prob_a
        return None, arch_code_prob_a
