# reference fix for 622 (maintainer's answer): pass conv.weights.data to generalized_he_init; the library is unchanged
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
init = import_module("622helpers_e2cnn_init")


class BasisExpansion(nn.Module):
    """Stand-in for e2cnn's BlocksBasisExpansion: fixed steerable-like filters, one per basis element."""

    def __init__(self, in_fields, out_fields, size_out, kernel_size=3, n_per_block=3):
        super().__init__()
        self._info = []
        blocks = []
        for o in range(out_fields):
            for i in range(in_fields):
                for r in range(n_per_block):
                    self._info.append({"in_irreps_position": i, "out_irreps_position": o,
                                       "in_irrep": "irrep_%d" % i, "out_irrep": "irrep_%d" % o, "radius": r})
                    b = torch.zeros(out_fields * size_out, in_fields, kernel_size, kernel_size)
                    b[o * size_out:(o + 1) * size_out, i] = torch.randn(size_out, kernel_size, kernel_size)
                    blocks.append(b)
        self.register_buffer("basis", torch.stack(blocks))

    def dimension(self):
        return self.basis.shape[0]

    def get_basis_info(self):
        return iter(self._info)

    def forward(self, weights):
        return torch.einsum("d,doikl->oikl", weights, self.basis)


class R2Conv(nn.Module):
    def __init__(self, in_fields, out_fields, size_out, kernel_size=3, bias=False):
        super().__init__()
        self.basisexpansion = BasisExpansion(in_fields, out_fields, size_out, kernel_size)
        self.weights = nn.Parameter(torch.zeros(self.basisexpansion.dimension()), requires_grad=True)
        init.generalized_he_init(self.weights.data, self.basisexpansion)

    def forward(self, x):
        return F.conv2d(x, self.basisexpansion(self.weights), padding=1)


def generate_2d_rot8(n_tasks=3):
    conv = R2Conv(1, 3, size_out=8, kernel_size=3, bias=False)  # trivial -> 3 x regular(8)
    xs, ys, ws = [], [], []
    for task_idx in range(n_tasks):
        init.generalized_he_init(conv.weights.data, conv.basisexpansion)
        inp = torch.randn(2, 1, 8, 8)
        result = conv(inp).detach()
        xs.append(inp)
        ys.append(result)
        ws.append(conv.weights.detach().clone())
    return torch.stack(xs), torch.stack(ys), torch.stack(ws)


def compute():
    torch.manual_seed(0)
    xs, ys, ws = generate_2d_rot8()
    return {"x": xs, "y": ys, "w": ws}


if __name__ == "__main__":
    compute()
