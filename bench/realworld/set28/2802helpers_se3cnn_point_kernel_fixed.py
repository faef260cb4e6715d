# Library module for case 2802 (reference: commit bab7886 applied, the window normalised out of place).
# e3nn (then se3cnn, the "point" branch), se3cnn/point_kernel.py, read at the parent of commit bab7886 ("replace window
# in place operation", 2019-04-17, Tess Smidt). Written anew at small size (not copied): get_Y_for_filter,
# angular_function, gaussian_radial_function (its `window /= (math.sqrt(2 * math.pi) * sigma)` after
# `window = torch.exp(...)`) and SE3PointKernel with its combination() follow the source (the batched branch dropped).
# Stand-ins for what it imports from se3cnn.SO3: `spherical_harmonics_xyz_backwardable_order_list` written for orders
# 0 and 1 only (real spherical harmonics of the normalised difference vectors, ordered y, z, x), and
# `basis_transformation_Q_J` for a pair of orders one of which is 0 (the identity of the 2J+1 components; other pairs
# raise); the case's representations use only those. `spherical_harmonics_xyz` (the non-backwardable one) is the same
# stand-in; the case takes the `sh_backwardable=True` path.
import math

import torch


class SO3:
    @staticmethod
    def spherical_harmonics_xyz_backwardable_order_list(order_list, xyz, eps=1e-8):
        r = xyz.norm(2, -1, keepdim=True).clamp_min(eps)
        unit = xyz / r
        out = []
        for l in order_list:
            if l == 0:
                out.append(0.5 * math.sqrt(1 / math.pi) * torch.ones_like(unit[..., 0]).unsqueeze(0))
            elif l == 1:
                y = math.sqrt(3 / (4 * math.pi)) * unit[..., [1, 2, 0]]
                out.append(y.permute(-1, *range(y.dim() - 1)))
            else:
                raise NotImplementedError("stand-in: orders 0 and 1 only")
        return torch.cat(out, dim=0)  # [sum(2l+1), N, M]

    spherical_harmonics_xyz = spherical_harmonics_xyz_backwardable_order_list

    @staticmethod
    def basis_transformation_Q_J(J, order_in, order_out):
        if order_in != 0 and order_out != 0:
            raise NotImplementedError("stand-in: one of the orders must be 0")
        return torch.eye(2 * J + 1)  # [m_out * m_in, m]


def get_Y_for_filter(irrep, filter_irreps, Y):
    if irrep not in filter_irreps:
        return None
    start_index = 0
    for filter_irrep in filter_irreps:
        if filter_irrep != irrep:
            start_index += 2 * filter_irrep + 1
        else:
            break
    end_index = start_index + (2 * irrep + 1)
    return Y[start_index:end_index]


def angular_function(difference_mat, order_in, order_out, filter_irreps, Ys, eps=1e-8):
    order_irreps = list(range(abs(order_in - order_out), order_in + order_out + 1))
    angular_filters = []
    for J in order_irreps:
        Y_J = get_Y_for_filter(J, filter_irreps, Ys)
        if Y_J is not None:
            Q_J = SO3.basis_transformation_Q_J(J, order_in, order_out)  # [m_out * m_in, m]
            N, M, _ = difference_mat.size()
            K_J = torch.einsum('mn,nab->mab', Q_J, Y_J)  # [m_out * m_in, N, M]
            K_J = K_J.reshape(2 * order_out + 1, 2 * order_in + 1, N, M)  # [m_out, m_in, N, M]
            angular_filters.append(K_J)
    return angular_filters, difference_mat.norm(2, -1), order_irreps


def gaussian_radial_function(solutions, r_field, order_irreps, radii, sigma=.6, J_max=10):
    '''gaussian radial functions: one shell per radius, of width sigma'''
    basis = []
    for r in radii:
        window = torch.exp(-.5 * ((r_field - r) / sigma) ** 2)
        window = window / (math.sqrt(2 * math.pi) * sigma)

        for sol, J in zip(solutions, order_irreps):
            if J <= J_max:
                x = sol.to(window.device) * window  # [m_out, m_in, N, M]
                basis.append(x)

    return torch.stack(basis, dim=0) if len(basis) > 0 else None


class SE3PointKernel(torch.nn.Module):
    def __init__(self, Rs_in, Rs_out, radii, radial_function=gaussian_radial_function, J_filter_max=10,
                 sh_backwardable=False):
        super().__init__()
        self.Rs_out = [(m, l) for m, l in Rs_out if m >= 1]
        self.Rs_in = [(m, l) for m, l in Rs_in if m >= 1]
        self.multiplicities_out = [m for m, _ in self.Rs_out]
        self.multiplicities_in = [m for m, _ in self.Rs_in]
        self.dims_out = [2 * l + 1 for _, l in self.Rs_out]
        self.dims_in = [2 * l + 1 for _, l in self.Rs_in]
        self.radial_function = radial_function
        self.register_buffer('radii', radii)
        self.J_filter_max = J_filter_max
        self.n_out = sum(m * d for m, d in zip(self.multiplicities_out, self.dims_out))
        self.n_in = sum(m * d for m, d in zip(self.multiplicities_in, self.dims_in))
        self.sh_backwardable = sh_backwardable

        self.nweights = 0
        set_of_irreps = set()
        for m_out, l_out in self.Rs_out:
            for m_in, l_in in self.Rs_in:
                basis_size = 0
                for _ in self.radii:
                    for J in range(abs(l_in - l_out), l_in + l_out + 1):
                        if J <= self.J_filter_max:
                            basis_size += 1
                            set_of_irreps.add(J)
                self.nweights += m_out * m_in * basis_size
        self.filter_irreps = sorted(list(set_of_irreps))
        self.weight = torch.nn.Parameter(torch.randn(self.nweights))

    def combination(self, weight, difference_mat):
        N, M, _ = difference_mat.size()
        kernel = weight.new_empty(self.n_out, self.n_in, N, M)
        begin_i = 0
        weight_index = 0

        if self.sh_backwardable:
            Ys = SO3.spherical_harmonics_xyz_backwardable_order_list(self.filter_irreps, difference_mat)
        else:
            Ys = SO3.spherical_harmonics_xyz(self.filter_irreps, difference_mat)

        for i, (m_out, l_out) in enumerate(self.Rs_out):
            begin_j = 0
            for j, (m_in, l_in) in enumerate(self.Rs_in):
                si = slice(begin_i, begin_i + m_out * self.dims_out[i])
                sj = slice(begin_j, begin_j + m_in * self.dims_in[j])
                angular = angular_function(difference_mat, l_in, l_out, self.filter_irreps, Ys)
                basis = self.radial_function(*angular, self.radii, J_max=self.J_filter_max)
                if basis is not None:
                    kij = basis
                    b_el = kij.size(0)
                    b_size = kij.size()[1:]  # [i, j, N, M]
                    w = weight[weight_index: weight_index + m_out * m_in * b_el].view(m_out * m_in, b_el)
                    weight_index += m_out * m_in * b_el
                    basis_kernels_ij = kij.contiguous().view(b_el, -1)  # [beta, i*j*N*M]
                    ker = torch.mm(w, basis_kernels_ij)  # [I*J, i*j*N*M]
                    ker = ker.view(m_out, m_in, *b_size)  # [I, J, i, j, N, M]
                    ker = ker.transpose(1, 2).contiguous()  # [I, i, J, j, N, M]
                    ker = ker.view(m_out * self.dims_out[i], m_in * self.dims_in[j], *b_size[2:])
                    kernel[si, sj] = ker
                else:
                    kernel[si, sj] = 0
                begin_j += m_in * self.dims_in[j]
            begin_i += m_out * self.dims_out[i]
        return kernel

    def forward(self, difference_mat):
        return self.combination(self.weight, difference_mat)
