# FIXED copy (commit 315c5303): the PyTorch backend's set_diag builds `diag + off_diag` out of place and returns it;
# rotation_vector_from_matrix assigns `vector_outer = gs.set_diag(...)`.
# Written anew at small size after geomstats/geomstats at the parent of commit 315c5303 ("remove inplace operation in
# pytorch/set_diag", February 2021): geomstats/_backend/pytorch/__init__.py (the `gs` functions used below: maximum,
# diagonal, set_diag, ...) and geomstats/geometry/special_orthogonal.py
# (_SpecialOrthogonal3Vectors.rotation_vector_from_matrix).
# The culprit, as in the PyTorch backend: `set_diag(x, new_diag)` writes the diagonal in place,
# `x[..., range(n), range(n)] = new_diag`. rotation_vector_from_matrix calls it as
# `gs.set_diag(vector_outer, gs.maximum(0., gs.diagonal(vector_outer, axis1=1, axis2=2)))`: `maximum` (torch.max
# of two tensors) saved the diagonal view of `vector_outer`, which the write then changes, so differentiating the
# rotation vector of a rotation matrix that requires grad fails with "one of the variables needed for gradient
# computation has been modified by an inplace operation".
# Stand-ins: the vectorization decorator is dropped (inputs are batches of 3 x 3 matrices);
# SkewSymmetricMatrices(3).basis_representation is the usual vee map (m21, m02, m10); `regularize` (which maps
# angles into [0, pi)) is left out, the angles used stay below pi; only the backend functions used here are kept.
import math

import torch


def array(x):
    return x if torch.is_tensor(x) else torch.tensor(x)


def maximum(a, b):
    return torch.max(array(a), array(b))


def diagonal(x, offset=0, axis1=0, axis2=1):
    return torch.diagonal(x, offset=offset, dim1=axis1, dim2=axis2)


def set_diag(x, new_diag):
    """Set the diagonal along the last two axis (returns a new array)."""
    arr_shape = x.shape
    off_diag = (1 - torch.eye(arr_shape[-1])) * x
    diag = torch.einsum('ij,...i->...ij', torch.eye(new_diag.shape[-1]), new_diag)
    return diag + off_diag


def trace(x, axis1=0, axis2=1):
    return torch.diagonal(x, dim1=axis1, dim2=axis2).sum(-1)


def get_slice(x, indices):
    return x[indices]


class _SpecialOrthogonal3Vectors:
    def __init__(self, epsilon=0.):
        self.n = 3
        self.epsilon = epsilon

    def vector_from_skew_matrix(self, skew_mat):
        return torch.stack([skew_mat[..., 2, 1], skew_mat[..., 0, 2], skew_mat[..., 1, 0]], dim=-1)

    def rotation_vector_from_matrix(self, rot_mat):
        n_rot_mats, _, _ = rot_mat.shape

        trace_ = trace(rot_mat, axis1=1, axis2=2)
        trace_ = trace_.unsqueeze(1)
        trace_num = torch.clip(trace_, -1, 3)
        angle = torch.arccos(0.5 * (trace_num - 1))
        rot_mat_transpose = torch.transpose(rot_mat, 1, 2)
        rot_vec_not_pi = self.vector_from_skew_matrix(rot_mat - rot_mat_transpose)
        mask_0 = torch.isclose(angle, torch.tensor(0.)).to(angle.dtype)
        mask_pi = torch.isclose(angle, torch.tensor(math.pi), atol=1e-2).to(angle.dtype)
        mask_else = (1 - mask_0) * (1 - mask_pi)

        numerator = 0.5 * mask_0 + angle * mask_else
        denominator = (1 - angle ** 2 / 6) * mask_0 + 2 * torch.sin(angle) * mask_else + mask_pi

        rot_vec_not_pi = rot_vec_not_pi * numerator / denominator

        vector_outer = 0.5 * (torch.eye(3) + rot_mat)
        vector_outer = set_diag(vector_outer, maximum(0., diagonal(vector_outer, axis1=1, axis2=2)))
        squared_diag_comp = diagonal(vector_outer, axis1=1, axis2=2)
        diag_comp = torch.sqrt(squared_diag_comp)
        norm_line = torch.linalg.norm(vector_outer, dim=2)
        max_line_index = torch.argmax(norm_line, dim=1)
        selected_line = get_slice(vector_outer, (range(n_rot_mats), max_line_index))
        signs = torch.sign(selected_line)
        rot_vec_pi = angle * signs * diag_comp

        rot_vec = rot_vec_not_pi + mask_pi * rot_vec_pi
        return rot_vec
