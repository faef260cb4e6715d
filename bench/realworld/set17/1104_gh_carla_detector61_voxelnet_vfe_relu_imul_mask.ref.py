# reference fix for 1104: the reporter's `x = x * mask` at the three places (issue #61).
import functools

import torch
from torch import nn
from torch.nn import functional as F


def change_default_args(**kwargs):
    def layer_wrapper(layer_class):
        return functools.partial(layer_class, **kwargs)
    return layer_wrapper


def get_paddings_indicator(actual_num, max_num, axis=0):
    actual_num = torch.unsqueeze(actual_num, axis + 1)
    max_num_shape = [1] * len(actual_num.shape)
    max_num_shape[axis + 1] = -1
    max_num = torch.arange(max_num, dtype=torch.int, device=actual_num.device).view(max_num_shape)
    paddings_indicator = actual_num.int() > max_num
    return paddings_indicator


class VFELayer(nn.Module):
    def __init__(self, in_channels, out_channels, use_norm=True, name='vfe'):
        super(VFELayer, self).__init__()
        self.name = name
        self.units = int(out_channels / 2)
        BatchNorm1d = change_default_args(eps=1e-3, momentum=0.01)(nn.BatchNorm1d)
        Linear = change_default_args(bias=False)(nn.Linear)
        self.linear = Linear(in_channels, self.units)
        self.norm = BatchNorm1d(self.units)

    def forward(self, inputs):
        voxel_count = inputs.shape[1]
        x = self.linear(inputs)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        pointwise = F.relu(x)
        aggregated = torch.max(pointwise, dim=1, keepdim=True)[0]
        repeated = aggregated.repeat(1, voxel_count, 1)
        concatenated = torch.cat([pointwise, repeated], dim=2)
        return concatenated


class VoxelFeatureExtractor(nn.Module):
    def __init__(self, num_input_features=4, use_norm=True, num_filters=[32, 128], with_distance=False,
                 name='VoxelFeatureExtractor'):
        super(VoxelFeatureExtractor, self).__init__()
        self.name = name
        BatchNorm1d = change_default_args(eps=1e-3, momentum=0.01)(nn.BatchNorm1d)
        Linear = change_default_args(bias=False)(nn.Linear)
        assert len(num_filters) == 2
        num_input_features += 3  # add mean features
        if with_distance:
            num_input_features += 1
        self._with_distance = with_distance
        self.vfe1 = VFELayer(num_input_features, num_filters[0], use_norm)
        self.vfe2 = VFELayer(num_filters[0], num_filters[1], use_norm)
        self.linear = Linear(num_filters[1], num_filters[1])
        self.norm = BatchNorm1d(num_filters[1])

    def forward(self, features, num_voxels, coors):
        points_mean = features[:, :, :3].sum(dim=1, keepdim=True) / num_voxels.type_as(features).view(-1, 1, 1)
        features_relative = features[:, :, :3] - points_mean
        if self._with_distance:
            points_dist = torch.norm(features[:, :, :3], 2, 2, keepdim=True)
            features = torch.cat([features, features_relative, points_dist], dim=-1)
        else:
            features = torch.cat([features, features_relative], dim=-1)
        voxel_count = features.shape[1]
        mask = get_paddings_indicator(num_voxels, voxel_count, axis=0)
        mask = torch.unsqueeze(mask, -1).type_as(features)
        x = self.vfe1(features)
        x = x * mask
        x = self.vfe2(x)
        x = x * mask
        x = self.linear(x)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        x = F.relu(x)
        x = x * mask
        voxelwise = torch.max(x, dim=1)[0]
        return voxelwise


def compute():
    torch.manual_seed(0)
    vfe = VoxelFeatureExtractor(num_input_features=4, num_filters=[8, 16])
    head = nn.Linear(16, 3)  # stand-in for the middle extractor and RPN
    num_voxels = torch.tensor([5, 3, 1, 4, 2, 5])
    features = torch.randn(6, 5, 4)
    features = features * get_paddings_indicator(num_voxels, 5).unsqueeze(-1).float()
    coors = torch.zeros(6, 4, dtype=torch.int32)
    target = torch.randn(6, 3)
    loss = ((head(vfe(features, num_voxels, coors)) - target) ** 2).mean()
    loss.backward()
    grads = {"vfe." + n: p.grad for n, p in vfe.named_parameters()}
    grads.update({"head." + n: p.grad for n, p in head.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
