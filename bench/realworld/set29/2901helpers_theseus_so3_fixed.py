# Library module for case 2901 (reference: the fix of commit b9c19f6).
# facebookresearch/theseus, theseus/geometry/so3.py (SO3) with the bits of lie_group.py / manifold.py it needs, read at
# the parent of commit b9c19f6 ("Fix backpropagation bugs in SO3 and SE3 log_map (#109)", 2022-03-09). Written anew at
# small size (not copied): Manifold keeps a batched `data` tensor and indexes it with `__getitem__`; SO3.exp_map
# (Rodrigues' formula with its small-angle branch) and SO3._log_map_impl as commit b9c19f6 rewrote it
# (the sine axis kept apart in `sine_axis`, `ret` a fresh tensor written once per branch) follow the source.
# Stand-ins: no name / dtype bookkeeping, no matrix checks, no jacobians, no SE3.
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
    def log_map(self):
        return self._log_map_impl()


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

    def _log_map_impl(self):
        sine_axis = torch.zeros(self.shape[0], 3, dtype=self.dtype, device=self.device)
        sine_axis[:, 0] = 0.5 * (self[:, 2, 1] - self[:, 1, 2])
        sine_axis[:, 1] = 0.5 * (self[:, 0, 2] - self[:, 2, 0])
        sine_axis[:, 2] = 0.5 * (self[:, 1, 0] - self[:, 0, 1])
        cosine = 0.5 * (self[:, 0, 0] + self[:, 1, 1] + self[:, 2, 2] - 1)
        sine = sine_axis.norm(dim=1)
        theta = torch.atan2(sine, cosine)
        # theta != pi
        not_near_pi = 1 + cosine > 1e-7
        # approximation of theta / sin(theta) when theta is near 0
        small_theta = theta[not_near_pi] < 5e-3
        non_zero = torch.ones(1, dtype=self.dtype, device=self.device)
        sine_nz = torch.where(small_theta, non_zero, sine[not_near_pi])
        scale = torch.where(small_theta, 1 + sine[not_near_pi] ** 2 / 6, theta[not_near_pi] / sine_nz)
        ret = torch.zeros_like(sine_axis)
        ret[not_near_pi] = sine_axis[not_near_pi] * scale.view(-1, 1)
        # theta ~ pi
        near_pi = ~not_near_pi
        ddiag = torch.diagonal(self[near_pi], dim1=1, dim2=2)
        # index of the major columns and diagonals
        major = torch.logical_and(ddiag[:, 1] > ddiag[:, 0], ddiag[:, 1] > ddiag[:, 2]) + 2 * torch.logical_and(
            ddiag[:, 2] > ddiag[:, 0], ddiag[:, 2] > ddiag[:, 1])
        sel_rows = self[near_pi, major]
        aux = torch.ones(sel_rows.shape[0], dtype=torch.bool)
        sel_rows[aux, major] -= cosine[near_pi]
        ret[near_pi] = sel_rows * (theta[near_pi] ** 2 / (1 - cosine[near_pi])).view(-1, 1)
        major_norm = ret[near_pi, major].sqrt().view(-1, 1)
        ret[near_pi] /= major_norm
        return ret


def log_map(variable):
    return variable.log_map()
