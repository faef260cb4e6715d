# source: https://github.com/Skype-line/X-Avatar/issues/12
# pattern: subscript_assign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# X-Avatar XAVATARModel.forward(): the canonical points of all parts go through shape_net at once, the prediction is
# cut back with `torch.split(shape_pd, split_num_list, dim=1)` and each piece reshaped (a view of a split() output);
# masked_softmax() (604helpers_xavatar_model_helpers.py, lib/model/helpers.py) then does `vec[~mask.bool()] = 1`
# before torch.min -> "Output 0 of ReshapeAliasBackward0 is a view and is being modified inplace ... returns multiple
# views" (training_step, sdf representation, eval_mode=True). Only the report is available; the ref is the
# out-of-place masking the error message prescribes (`vec = vec.masked_fill(~mask.bool(), 1)`).
# SMPL server, deformer root finding and the networks are replaced by small stand-ins with the same data flow.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
masked_softmax = import_module("604helpers_xavatar_model_helpers").masked_softmax


class ImplicitNetwork(nn.Module):
    def __init__(self, d_in=3, cond_dim=4, d_hidden=16):
        super().__init__()
        self.lin0 = nn.Linear(d_in + cond_dim, d_hidden)
        self.lin1 = nn.Linear(d_hidden, 1)

    def forward(self, x, cond, return_feature=False):
        cond = cond[:, None, :].expand(-1, x.shape[1], -1)
        return self.lin1(torch.nn.functional.softplus(self.lin0(torch.cat([x, cond], -1))))


class ForwardDeformer(nn.Module):
    """Stand-in: num_init canonical candidates per deformed point, with a validity mask."""

    def __init__(self, num_init=3):
        super().__init__()
        self.num_init = num_init
        self.offsets = nn.Parameter(0.1 * torch.randn(num_init, 3))

    def forward(self, pts_d, _, smpl_tfs, part_type, eval_mode=True):
        pts_c = pts_d[:, :, None, :] + self.offsets + smpl_tfs[:, None, None, :3]
        valid_ids = pts_c.detach().norm(dim=-1) < 1.5
        valid_ids[..., 0] = True
        return pts_c, {'valid_ids': valid_ids}


class XAVATARModel(nn.Module):
    def __init__(self, representation='sdf'):
        super().__init__()
        self.representation = representation
        self.shape_net = ImplicitNetwork()
        self.deformer = ForwardDeformer()

    def forward(self, pts_d, smpl_tfs, cond, eval_mode=True, split_numbers=None, part_type_list=None):
        accum_shape, pts_c_list, mask_list, split_num_list, index_list = [], [], [], [], []

        for part_type, pts_d_split in zip(part_type_list, torch.split(pts_d, split_numbers, dim=1)):
            pts_c, intermediates = self.deformer(pts_d_split, None, smpl_tfs, part_type, eval_mode=eval_mode)

            mask_list.append(intermediates['valid_ids'])
            num_batch, num_point, num_init, num_dim = pts_c.shape
            pts_c = pts_c.reshape(num_batch, num_point * num_init, num_dim)
            pts_c_list.append(pts_c)
            split_num_list.append(pts_c.shape[1])
        pts_c = torch.cat(pts_c_list, dim=1)
        shape_pd = self.shape_net(pts_c, cond, return_feature=False)
        shape_pd_list = torch.split(shape_pd, split_num_list, dim=1)

        for shape_pd, mask in zip(shape_pd_list, mask_list):
            num_batch, num_point, num_init = mask.shape
            shape_pd = shape_pd.reshape(num_batch, num_point, num_init)
            if eval_mode:
                mode = 'max' if self.representation == 'occ' else 'min'
                shape_pd, index = masked_softmax(shape_pd, mask, dim=-1, mode=mode)
            accum_shape.append(shape_pd)
            index_list.append(index)

        shape_pd = torch.cat(accum_shape, 1)
        return pts_c, shape_pd


def compute():
    torch.manual_seed(0)
    model = XAVATARModel(representation='sdf')
    pts_d = torch.randn(2, 10, 3)
    smpl_tfs = 0.1 * torch.randn(2, 4)
    cond = torch.randn(2, 4)
    sdf_gt = torch.randn(2, 10, 1)
    # training_step: split_numbers per part type from the data loader
    _, shape_pd = model(pts_d, smpl_tfs, cond, eval_mode=True, split_numbers=[6, 4],
                        part_type_list=['body', 'hand'])
    loss = (shape_pd - sdf_gt).abs().mean()
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
