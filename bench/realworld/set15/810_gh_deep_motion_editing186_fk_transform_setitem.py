# source: https://github.com/DeepMotionEditing/deep-motion-editing/pull/186
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# deep-motion-editing, style_transfer/kinematics.py, ForwardKinematics.forward (used by the motion style-transfer
# model to turn predicted joint quaternions into positions for its losses): walking the skeleton,
# `transform[..., i, :, :] = torch.matmul(transform[..., pi, :, :], transform[..., i, :, :])` writes the accumulated
# rotation back into `transform`, whose slices earlier matmuls saved for backward: "... output 0 of ViewBackward, is
# at version 37; expected version 35". PR #186 (merged, "Stylization version of kinematics.py missing previous
# bugfix", the same fix as #182 for the retargeting code, issue #166): clone both operands,
# `torch.matmul(transform[..., pi, :, :].clone(), transform[..., i, :, :].clone())`.
# The culprit is in the repo module, here 810helpers_kinematics.py (ref: 810helpers_kinematics_fixed.py).
# Stand-ins: the skeleton (utils.load_skeleton.Skel) is a 6-joint chain with a branch, random offsets; the network
# output is a small Conv1d decoder producing [B, J * 4, T] quaternions; loss: MSE of forwardX's trimmed positions
# against random targets (the model's position loss).
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
kin = importlib.import_module("810helpers_kinematics")


class Skel:
    topology = [-1, 0, 1, 2, 1, 4]
    chosen_joints = [0, 1, 2, 3, 4, 5]

    def __init__(self):
        self.offset = torch.randn(6, 3)


def compute():
    torch.manual_seed(0)
    fk = kin.ForwardKinematics(Skel())
    J, T = 6, 5
    decoder = nn.Sequential(nn.Conv1d(8, 16, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv1d(16, J * 4, 3, padding=1))
    z = torch.randn(2, 8, T)
    rotations = decoder(z)  # [B, J * 4, T]
    pos = fk.forwardX(rotations)  # [B, (J - 1) * 3, T]
    target = torch.randn_like(pos)
    loss = ((pos - target) ** 2).mean()
    loss.backward()
    return {n: p.grad for n, p in decoder.named_parameters()}


if __name__ == "__main__":
    compute()
