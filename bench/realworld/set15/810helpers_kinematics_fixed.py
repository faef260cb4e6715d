# helper for case 810 (fixed as in PR #186: both matmul operands cloned): style_transfer/kinematics.py of
# DeepMotionEditing/deep-motion-editing,
# ForwardKinematics reduced to the quaternion path the style-transfer model uses (forwardX -> forward_from_raw ->
# forward); `utils.load_skeleton.Skel` is replaced by a small skeleton passed in by the caller (stand-in), numpy by
# torch for the offset check.
import copy

import torch


class ForwardKinematics:
    def __init__(self, skel):
        offset = skel.offset
        topology = skel.topology
        if isinstance(offset, torch.Tensor):
            self.offset = offset
        else:
            raise Exception('Unknown type for offset')
        self.topology = copy.copy(topology)
        self.chosen_joints = skel.chosen_joints

    # rel [B, T, J, 3] relative joint positions --> save needed joints, remove root & flip, [B, (J - 1) * 3, T]
    def trim(self, rel):
        rel = rel[..., self.chosen_joints, :]
        result = rel[..., 1:, :]
        result = result.reshape(result.shape[:2] + (-1,))  # [B, T, (J - 1) * 3]
        result = result.permute(0, 2, 1)  # [B, (J - 1) * 3, T]
        return result

    def forwardX(self, rotations):
        local_pos = self.forward_from_raw(rotations, world=True, quater=True)  # [B, T, J, 3]
        local_pos = self.trim(local_pos)
        return local_pos

    # rotation: [B, J * 4, T]
    def forward_from_raw(self, rotation, world=True, quater=True):
        rotation = rotation.reshape(rotation.shape[0], -1, 4, rotation.shape[-1])
        norm = torch.norm(rotation, dim=2, keepdim=True)
        ones = torch.ones(norm.shape, device=rotation.device) * 1e-10
        norm = torch.where(norm < ones, ones, norm)
        rotation = rotation / norm
        position = torch.zeros(rotation.shape[:1] + (3, ) + rotation.shape[-1:], device=rotation.device)
        return self.forward(rotation, position, world=world, quater=quater)

    def forward(self, rotation, position, order='xyz', quater=True, world=True):
        if quater and rotation.shape[-2] != 4: raise Exception('Unexpected shape of rotation')
        rotation = rotation.permute(0, 3, 1, 2)
        position = position.permute(0, 2, 1)
        result = torch.empty(rotation.shape[:-1] + (3, ), device=position.device)

        transform = self.transform_from_quaternion(rotation)

        if self.offset.device != rotation.device:
            self.offset = self.offset.to(rotation.device)

        result[..., 0, :] = position
        for i, pi in enumerate(self.topology):
            if pi == -1:
                assert i == 0
                continue

            result[..., i, :] = torch.matmul(transform[..., pi, :, :], self.offset[i])
            if world: result[..., i, :] += result[..., pi, :]
            transform[..., i, :, :] = torch.matmul(transform[..., pi, :, :].clone(), transform[..., i, :, :].clone())
        return result

    @staticmethod
    def transform_from_quaternion(quater):
        qw = quater[..., 0]
        qx = quater[..., 1]
        qy = quater[..., 2]
        qz = quater[..., 3]

        x2 = qx + qx
        y2 = qy + qy
        z2 = qz + qz
        xx = qx * x2
        yy = qy * y2
        wx = qw * x2
        xy = qx * y2
        yz = qy * z2
        wy = qw * y2
        xz = qx * z2
        zz = qz * z2
        wz = qw * z2

        m = torch.empty(quater.shape[:-1] + (3, 3), device=quater.device)
        m[..., 0, 0] = 1.0 - (yy + zz)
        m[..., 0, 1] = xy - wz
        m[..., 0, 2] = xz + wy
        m[..., 1, 0] = xy + wz
        m[..., 1, 1] = 1.0 - (xx + zz)
        m[..., 1, 2] = yz - wx
        m[..., 2, 0] = xz - wy
        m[..., 2, 1] = yz + wx
        m[..., 2, 2] = 1.0 - (xx + yy)

        return m
