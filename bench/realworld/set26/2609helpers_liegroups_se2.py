# Written anew at small size after utiasSTARS/liegroups at the parent of commit 0d222f4 ("Changes for compatibility
# with PyTorch, removed in-place operations", January 2022): liegroups/torch/se2.py (SE2Matrix.exp), so2.py
# (SO2Matrix.exp, left_jacobian, wedge), utils.py (isclose) and _base.py (the matrix containers).
# The culprit, as in se2.py: SE2Matrix.exp(xi) takes `rho = xi[:, 0:2]` and, to batch the product with the rotation
# Jacobian, reshapes it in place, `rho.unsqueeze_(dim=2)` (and `rot_jac.unsqueeze_(dim=0)` for a single pose, then
# `torch.bmm(rot_jac, rho).squeeze_()`). When the pose vector xi is itself being optimised (a leaf that requires
# grad), `rho` is a view of that leaf and the call raises "a view of a leaf Variable that requires grad is being
# used in an in-place operation".
# Stand-ins: only the batch path (N > 1) and the methods it uses are kept; the containers keep `mat` / `rot`,
# `trans`; no inverse, log, adjoint, normalisation or cuda helpers; upstream's `phi.__class__(N, 2, 2)` /
# `phi.__class__([1.])` (the legacy torch.Tensor constructor) are written `phi.new_empty` / `phi.new_tensor`;
# `dot` is reduced to R p + t for batched points.
import torch


def isclose(mat1, mat2, tol=1e-6):
    return (mat1 - mat2).abs_().lt(tol)


class SO2Matrix:
    dim = 2
    dof = 1

    def __init__(self, mat):
        self.mat = mat

    def as_matrix(self):
        return self.mat

    @classmethod
    def wedge(cls, phi):
        if phi.dim() < 1:
            phi = phi.unsqueeze(dim=0)
        if phi.dim() < 2:
            phi = phi.unsqueeze(dim=1)
        Phi = phi.new_zeros(phi.shape[0], cls.dim, cls.dim)
        Phi[:, 0, 1] = -phi[:, 0]
        Phi[:, 1, 0] = phi[:, 0]
        return Phi.squeeze_()

    @classmethod
    def exp(cls, phi):
        if phi.dim() < 1:
            phi = phi.unsqueeze(dim=0)
        s = phi.sin()
        c = phi.cos()
        mat = phi.new_empty(phi.shape[0], cls.dim, cls.dim)
        mat[:, 0, 0] = c
        mat[:, 0, 1] = -s
        mat[:, 1, 0] = s
        mat[:, 1, 1] = c
        return cls(mat.squeeze_())

    @classmethod
    def left_jacobian(cls, phi):
        if phi.dim() < 1:
            phi = phi.unsqueeze(dim=0)
        jac = phi.new_empty(phi.shape[0], cls.dim, cls.dim)

        # Near phi==0, use first order Taylor expansion
        small_angle_mask = isclose(phi, 0.)
        small_angle_inds = small_angle_mask.nonzero().squeeze_(dim=1)
        if len(small_angle_inds) > 0:
            jac[small_angle_inds] = torch.eye(cls.dim).expand(len(small_angle_inds), cls.dim, cls.dim) \
                + 0.5 * cls.wedge(phi[small_angle_inds])

        # Otherwise...
        large_angle_mask = small_angle_mask.logical_not()
        large_angle_inds = large_angle_mask.nonzero().squeeze_(dim=1)
        if len(large_angle_inds) > 0:
            angle = phi[large_angle_inds]
            s = angle.sin()
            c = angle.cos()
            A = (s / angle).unsqueeze_(dim=1).unsqueeze_(dim=2).expand_as(jac[large_angle_inds]) * \
                torch.eye(cls.dim).unsqueeze_(dim=0).expand_as(jac[large_angle_inds])
            B = ((1. - c) / angle).unsqueeze_(dim=1).unsqueeze_(dim=2).expand_as(jac[large_angle_inds]) * \
                cls.wedge(phi.new_tensor([1.]))
            jac[large_angle_inds] = A + B

        return jac.squeeze_()


class SE2Matrix:
    dim = 3
    dof = 3
    RotationType = SO2Matrix

    def __init__(self, rot, trans):
        self.rot = rot
        self.trans = trans

    @classmethod
    def exp(cls, xi):
        if xi.dim() < 2:
            xi = xi.unsqueeze(dim=0)
        if xi.shape[1] != cls.dof:
            raise ValueError("xi must have shape ({},) or (N,{})".format(cls.dof, cls.dof))

        rho = xi[:, 0:2]
        phi = xi[:, 2]

        rot = cls.RotationType.exp(phi)
        rot_jac = cls.RotationType.left_jacobian(phi)

        if rot_jac.dim() < 3:
            rot_jac.unsqueeze_(dim=0)
        if rho.dim() < 3:
            rho.unsqueeze_(dim=2)

        trans = torch.bmm(rot_jac, rho).squeeze_()

        return cls(rot, trans)

    def dot(self, points):
        # points (N, P, 2) -> R p + t for each pose
        R = self.rot.as_matrix()
        return torch.einsum('nij,npj->npi', R, points) + self.trans.unsqueeze(1)
