# reference fix for 810: PR #186 in the repo module (810helpers_kinematics_fixed.py): both matmul operands cloned.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
kin = importlib.import_module("810helpers_kinematics_fixed")


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
