# source: https://github.com/lucidrains/se3-transformer-pytorch/commit/84b15666f32e3d0b457f85a976a123cc934b1cfa
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# se3-transformer-pytorch, se3_transformer_pytorch.py, GlobalLinearAttention.forward (used by SE3Transformer with
# `global_linear_attn_every`): `q, k, v = self.to_qkv(x).chunk(3, dim = -1)`, rearranged per head, then with a mask
# `k.masked_fill_(~mask, ...)` and `v.masked_fill_(~mask, 0.)` on views of the chunk outputs; from PyTorch 1.8 this
# raises "Output 1 of SplitBackward is a view and is being modified inplace ...". The report is the maintainer's
# commit 84b1566 ("fix tests for pytorch 1.8.1 marking inplace operations as unsafe": the repository's
# test_equivariance_with_global_linear_attn, a masked forward pass, failed), which writes
# `k = k.masked_fill(...)` and `v = v.masked_fill(...)` (and other masked_fill_ calls elsewhere in the module).
# Like that test, compute() runs forward passes only and returns the outputs: the commit left `q *= self.scale` on
# the softmax output, which a backward pass would trip on in the fixed code too (not part of this report).
# The library module is 906helpers_se3_transformer.py (ref: 906helpers_se3_transformer_fixed.py).
# Stand-ins: one AttentionBlockSE3 (prenorm NormSE3 + GlobalLinearAttention + residual) instead of the full
# SE3Transformer (no basis, edges or neighbours, which this attention does not read); fiber {0: 16, 1: 16},
# 2 heads of 8; 1 x 6 points with a mask hiding the last point; the equivariance check of the test becomes a
# rotation of the type-1 features, compared by returning both outputs.
import importlib
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
se3 = importlib.import_module("906helpers_se3_transformer")


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
