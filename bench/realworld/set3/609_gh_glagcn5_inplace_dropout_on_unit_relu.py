# source: https://github.com/bruceyo/GLA-GCN/issues/5
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# GLA-GCN (3D human pose from 2D keypoints, run_s-agcn.py): S_AGCN._forward_blocks() applies
# `self.drop = nn.Dropout(dropout, inplace=True)` to the output of each TCN_GCN_unit, whose forward (in
# 609helpers_glagcn_agcn.py, the repo's common/agcn.py) ends with `return self.relu(x)`; the in-place dropout
# overwrites the ReLU output that ReluBackward0 saved. Fix given in the thread (confirmed by another user): make
# TCN_GCN_unit return `self.relu(x).clone()` (in the helper module). numpy and `.cuda(x.get_device())` are replaced
# by torch on the input's device; 8 channels instead of 96.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
agcn = import_module("609helpers_glagcn_agcn")
Graph, TCN_GCN_unit = agcn.Graph, agcn.TCN_GCN_unit


class TemporalModelBase(nn.Module):
    def __init__(self, num_joints_in, in_features, num_joints_out,
                 filter_widths, causal, dropout, channels, dataset):
        super().__init__()
        for fw in filter_widths:
            assert fw % 2 != 0, 'Only odd filter widths are supported'
        self.num_joints_in = num_joints_in
        self.in_features = in_features
        self.num_joints_out = num_joints_out
        self.filter_widths = filter_widths
        self.drop = nn.Dropout(dropout, inplace=True)
        self.pad = [filter_widths[0] // 2]

    def forward(self, x):
        assert len(x.shape) == 4
        assert x.shape[-2] == self.num_joints_in
        assert x.shape[-1] == self.in_features
        sz = x.shape[:3]
        x = x.view(x.shape[0], x.shape[1], -1)
        x = x.permute(0, 2, 1)
        x = self._forward_blocks(x)
        x = x.permute(0, 2, 1)
        x = x.view(sz[0], -1, self.num_joints_out, 3)
        return x


class S_AGCN(TemporalModelBase):
    def __init__(self, num_joints_in, in_features, num_joints_out,
                 filter_widths, causal=False, dropout=0.25, channels=96, dataset='h36m'):
        super().__init__(num_joints_in, in_features, num_joints_out, filter_widths, causal, dropout, channels, dataset)
        layers_tcngcn = []
        num_person = 1
        in_channels = 2
        num_point = num_joints_in
        self.graph = Graph(dataset)
        self.data_bn = nn.BatchNorm1d(num_person * in_channels * num_point)
        A = self.graph.A
        self.expand_gcn = TCN_GCN_unit(2, channels, A)

        self.causal_shift = []
        next_dilation = filter_widths[0]
        for i in range(0, len(filter_widths)):
            self.pad.append((filter_widths[i] - 1) * next_dilation // 2)
            self.causal_shift.append((filter_widths[i] // 2 * next_dilation) if causal else 0)
            layers_tcngcn.append(TCN_GCN_unit(channels, channels, A))
            layers_tcngcn.append(TCN_GCN_unit(channels, channels, A, stride=filter_widths[i], residual=False))
            next_dilation *= filter_widths[i]

        self.layers_tcngcn = nn.ModuleList(layers_tcngcn)
        self.fc = nn.Conv1d(channels, 3, 1)

    def _forward_blocks(self, x):
        N, V, T = x.size()
        v = V // 2
        x = self.data_bn(x)
        x = x.view(N, 1, v, 2, T)
        x = x.permute(0, 1, 3, 4, 2).contiguous()
        x = x.view(N, 2, T, v)

        x = self.expand_gcn(x)
        for i in range(len(self.pad) - 1):
            res = x[:, :, self.causal_shift[i] + self.filter_widths[i] // 2:: self.filter_widths[i], :]
            x = self.drop(self.layers_tcngcn[2 * i](x))
            x = self.drop(self.layers_tcngcn[2 * i + 1](x))
            x = res + x
        pose_3d_ = x

        pose_3d = torch.zeros(N, 3, v, device=x.device)
        for i in range(0, v):
            pose_joint_3d = pose_3d_[:, :, :, i].mean(2)
            pose_joint_3d = self.fc(pose_joint_3d.view(N, -1, 1))
            pose_3d[:, :, i] = pose_joint_3d.view(N, -1)
        return pose_3d


def compute():
    torch.manual_seed(0)
    model = S_AGCN(17, 2, 17, filter_widths=[3, 3], causal=False, dropout=0.25, channels=8, dataset='h36m')
    model.train()
    inputs_2d = torch.randn(2, 9, 17, 2)  # receptive field 9 frames
    inputs_3d = torch.randn(2, 1, 17, 3)
    predicted_3d_pos = model(inputs_2d)
    loss_3d_pos = torch.mean(torch.norm(predicted_3d_pos - inputs_3d, dim=-1))  # mpjpe
    loss_3d_pos.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
