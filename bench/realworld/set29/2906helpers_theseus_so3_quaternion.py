# Library module for case 2906 (original).
# facebookresearch/theseus, theseus/geometry/so3.py (SO3.exp_map, SO3.to_quaternion) with the bits of lie_group.py /
# manifold.py they need, read at the parent of commit 2cb032d ("Refactor `SO3.to_quaternion` to fix backward bugs and
# improve the accuracy around `pi` (#116)", 2022-03-14). Written anew at small size (not copied): Manifold keeps a
# batched `data` tensor and indexes it with `__getitem__`; SO3.exp_map (Rodrigues' formula with its small-angle branch)
# and SO3.to_quaternion (the scalar part written into `ret`, the vector part divided by it away from pi, the near-pi
# branch, and the statement at fault: the final `ret /= ret.norm(dim=1, keepdim=True)`, whose norm saved `ret`) follow
# the source. Stand-ins: no name / dtype bookkeeping, no matrix checks, no jacobians, no log map.
import torch


class Manifold:
    def __init__(self, data=None, dtype=torch.float):
        self.data = data if data is not None else torch.eye(3, dtype=dtype).unsqueeze(0)

    def __getitem__(self, item):
        return self.data[item]

    def __setitem__(self, item, value):
        self.data[item] = value

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def device(self):
        return self.data.device


class LieGroup(Manifold):
    pass


class SO3(LieGroup):
    @staticmethod
    def exp_map(tangent_vector):
        if tangent_vector.ndim != 2 or tangent_vector.shape[1] != 3:
            raise ValueError("Invalid input for SO3.exp_map.")
        ret = SO3(dtype=tangent_vector.dtype)
        theta = torch.linalg.norm(tangent_vector, dim=1, keepdim=True).unsqueeze(1)
        theta2 = theta ** 2
        small_theta = theta < 0.005
        non_zero = torch.ones(1, dtype=tangent_vector.dtype, device=tangent_vector.device)
        theta_nz = torch.where(small_theta, non_zero, theta)
        theta2_nz = torch.where(small_theta, non_zero, theta2)
        cosine = torch.where(small_theta, 8 / (4 + theta2) - 1, theta.cos())
        sine_by_theta = torch.where(small_theta, 0.5 * cosine + 0.5, theta.sin() / theta_nz)
        one_minus_cosine_by_theta2 = torch.where(small_theta, 0.5 * sine_by_theta, (1 - cosine) / theta2_nz)
        ret.data = one_minus_cosine_by_theta2 * tangent_vector.view(-1, 3, 1) @ tangent_vector.view(-1, 1, 3)
        ret[:, 0, 0] += cosine.view(-1)
        ret[:, 1, 1] += cosine.view(-1)
        ret[:, 2, 2] += cosine.view(-1)
        temp = sine_by_theta.view(-1, 1) * tangent_vector
        ret[:, 0, 1] -= temp[:, 2]
        ret[:, 1, 0] += temp[:, 2]
        ret[:, 0, 2] += temp[:, 1]
        ret[:, 2, 0] -= temp[:, 1]
        ret[:, 1, 2] -= temp[:, 0]
        ret[:, 2, 1] += temp[:, 0]
        return ret

    def to_quaternion(self):
        ret = torch.zeros(self.shape[0], 4, dtype=self.dtype, device=self.device)
        # ret[:, 0] computes the cos(0.5 * theta)
        ret[:, 0] = 0.5 * (1 + self[:, 0, 0] + self[:, 1, 1] + self[:, 2, 2]).clamp(0, 4).sqrt()
        # theta != pi
        not_near_pi = ret[:, 0] > 1e-5
        ret[not_near_pi, 1] = 0.25 * (self[not_near_pi, 2, 1] - self[not_near_pi, 1, 2]) / ret[not_near_pi, 0]
        ret[not_near_pi, 2] = 0.25 * (self[not_near_pi, 0, 2] - self[not_near_pi, 2, 0]) / ret[not_near_pi, 0]
        ret[not_near_pi, 3] = 0.25 * (self[not_near_pi, 1, 0] - self[not_near_pi, 0, 1]) / ret[not_near_pi, 0]
        # theta ~ pi
        near_pi = ~not_near_pi
        ddiag = torch.diagonal(self[near_pi], dim1=1, dim2=2)
        # index of the major columns and diagonals
        major = torch.logical_and(ddiag[:, 1] > ddiag[:, 0], ddiag[:, 1] > ddiag[:, 2]) + 2 * torch.logical_and(
            ddiag[:, 2] > ddiag[:, 0], ddiag[:, 2] > ddiag[:, 1])
        ret[near_pi, 1:] = self[near_pi, major]
        cosine_near_pi = 0.5 * (self[near_pi, 0, 0] + self[near_pi, 1, 1] + self[near_pi, 2, 2] - 1)
        ret[near_pi, major + 1] -= cosine_near_pi
        ret[near_pi, 1:] /= ret[near_pi, 1:].norm(dim=1, keepdim=True)
        ret[near_pi, 1:] *= (0.5 * (1 - cosine_near_pi)).clamp(0, 1).sqrt().view(-1, 1)
        ret /= ret.norm(dim=1, keepdim=True)
        return ret
