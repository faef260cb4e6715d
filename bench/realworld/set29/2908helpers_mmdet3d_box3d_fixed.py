# Library module for case 2908 (reference: the fix of PR #283, `self.tensor = tensor.clone()`).
# open-mmlab/mmdetection3d, mmdet3d/core/bbox/structures/base_box3d.py (BaseInstance3DBoxes) and cam_box3d.py
# (CameraInstance3DBoxes), read at the parent of commit 0a7fb9c ("Fix issues woth inplace modification of tensors in
# BaseInstance3DBoxes (#283)", 2021-01-22). Written anew at small size (not copied): the constructors keep a copy of
# the given tensor as `self.tensor` (`tensor.clone()`, as the fix writes it) and, when the boxes are given with another
# origin than the class's own, shift the centers of that copy in place with
# `self.tensor[:, :3] += self.tensor[:, 3:6] * (dst - src)`; the `dims`, `bottom_center`, `height` and
# CameraInstance3DBoxes' `gravity_center` properties follow the source. Stand-ins: no numpy / list inputs beyond
# torch.as_tensor, no corners, rotation, flipping, overlaps or the CUDA iou3d op (not needed by the case).
import torch


class BaseInstance3DBoxes(object):
    def __init__(self, tensor, box_dim=7, with_yaw=True, origin=(0.5, 0.5, 0)):
        if isinstance(tensor, torch.Tensor):
            device = tensor.device
        else:
            device = torch.device('cpu')
        tensor = torch.as_tensor(tensor, dtype=torch.float32, device=device)
        if tensor.numel() == 0:
            tensor = tensor.reshape((0, box_dim)).to(dtype=torch.float32, device=device)
        assert tensor.dim() == 2 and tensor.size(-1) == box_dim, tensor.size()

        if tensor.shape[-1] == 6:
            # a box of dimension 6 gets a fake yaw of 0
            assert box_dim == 6
            fake_rot = tensor.new_zeros(tensor.shape[0], 1)
            tensor = torch.cat((tensor, fake_rot), dim=-1)
            self.box_dim = box_dim + 1
            self.with_yaw = False
        else:
            self.box_dim = box_dim
            self.with_yaw = with_yaw
        self.tensor = tensor.clone()

        if origin != (0.5, 0.5, 0):
            dst = self.tensor.new_tensor((0.5, 0.5, 0))
            src = self.tensor.new_tensor(origin)
            self.tensor[:, :3] += self.tensor[:, 3:6] * (dst - src)

    @property
    def dims(self):
        return self.tensor[:, 3:6]

    @property
    def yaw(self):
        return self.tensor[:, 6]

    @property
    def bottom_center(self):
        return self.tensor[:, :3]


class CameraInstance3DBoxes(BaseInstance3DBoxes):
    def __init__(self, tensor, box_dim=7, with_yaw=True, origin=(0.5, 1.0, 0.5)):
        if isinstance(tensor, torch.Tensor):
            device = tensor.device
        else:
            device = torch.device('cpu')
        tensor = torch.as_tensor(tensor, dtype=torch.float32, device=device)
        if tensor.numel() == 0:
            tensor = tensor.reshape((0, box_dim)).to(dtype=torch.float32, device=device)
        assert tensor.dim() == 2 and tensor.size(-1) == box_dim, tensor.size()

        if tensor.shape[-1] == 6:
            assert box_dim == 6
            fake_rot = tensor.new_zeros(tensor.shape[0], 1)
            tensor = torch.cat((tensor, fake_rot), dim=-1)
            self.box_dim = box_dim + 1
            self.with_yaw = False
        else:
            self.box_dim = box_dim
            self.with_yaw = with_yaw
        self.tensor = tensor.clone()

        if origin != (0.5, 1.0, 0.5):
            dst = self.tensor.new_tensor((0.5, 1.0, 0.5))
            src = self.tensor.new_tensor(origin)
            self.tensor[:, :3] += self.tensor[:, 3:6] * (dst - src)

    @property
    def height(self):
        return self.tensor[:, 4]

    @property
    def gravity_center(self):
        bottom_center = self.bottom_center
        gravity_center = torch.zeros_like(bottom_center)
        gravity_center[:, [0, 2]] = bottom_center[:, [0, 2]]
        gravity_center[:, 1] = bottom_center[:, 1] - self.tensor[:, 4] * 0.5
        return gravity_center
