# reference fix for 906: commit 84b1566, `k = k.masked_fill(...)` / `v = v.masked_fill(...)` (helper _fixed).
import importlib
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
se3 = importlib.import_module("906helpers_se3_transformer_fixed")


def rot_z(gamma):
    return torch.tensor([[math.cos(gamma), -math.sin(gamma), 0.],
                         [math.sin(gamma), math.cos(gamma), 0.],
                         [0., 0., 1.]])


def compute():
    torch.manual_seed(0)
    fiber = [(0, 16), (1, 16)]
    block = se3.AttentionBlockSE3(fiber, dim_head = 8, heads = 2)
    feats = {'0': torch.randn(1, 6, 16, 1), '1': torch.randn(1, 6, 16, 3)}
    mask = torch.ones(1, 6).bool()
    mask[:, -1] = False
    R = rot_z(0.7)

    out1 = block(feats, None, None, None, mask = mask)
    rotated = {'0': feats['0'], '1': feats['1'] @ R}
    out2 = block(rotated, None, None, None, mask = mask)
    return {'type0': out1['0'], 'type1': out1['1'], 'type1_rotated_input': out2['1'],
            'type1_rotated_output': out1['1'] @ R}


if __name__ == "__main__":
    compute()
