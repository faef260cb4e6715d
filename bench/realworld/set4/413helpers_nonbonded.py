# smee/potentials/nonbonded.py and smee/utils.py (openforcefield/smee) before PR #150, reduced to the Lennard-Jones
# long-range dispersion correction with a switching function. TensorSystem / TensorPotential and the LRC type
# bookkeeping (prepare_lrc_types) are replaced by plain arguments: the per-type sigma/epsilon parameters, the
# interacting type pairs and their counts.
import torch


def tensor_like(data, other: torch.Tensor) -> torch.Tensor:
    """Create a tensor with the same device and type as another tensor."""

    if isinstance(data, torch.Tensor):
        return data.clone().detach().to(other.device, other.dtype)

    return torch.tensor(data, dtype=other.dtype, device=other.device)


def lorentz_berthelot(epsilon_a, epsilon_b, sigma_a, sigma_b):
    return (epsilon_a * epsilon_b).sqrt(), 0.5 * (sigma_a + sigma_b)


def _integrate_lj_switch(r, rs, rc, sig):
    """Evaluate the intergral of the LJ potential multiplied by one minus the switching
    function (see the package docstring for the closed form)."""
    b = 1.0 / (rc - rs)

    coeff_0 = tensor_like([rs**3, rs**2, rs, 1, b, b**2], rs) * (
        tensor_like([rs**2 * b**2, rs * b, 1], rs)
        * tensor_like(
            [[6, 15, 10], [1, 2, 1], [2, 3, 1], [6, 6, 1], [0, 2, 1], [0, 0, 1]], rs
        )
    ).sum(dim=-1)

    coeff_01 = (
        sig[:, None] ** 6
        * tensor_like([-28, 945, -1080, 420, -756, 378], rs)
        * coeff_0
    )
    coeff_11 = tensor_like([84, -3780, 7560, 2520, -3780, 756], rs) * coeff_0

    r_pow = torch.pow(
        r, tensor_like([-9, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2], rs)
    )
    r_pow[-3] = torch.log(r)

    integral = (
        -(b**3)
        * sig**6
        * (coeff_01 * r_pow[:6] + coeff_11 * r_pow[6:]).sum(dim=-1)
        / 252
    )

    return integral


def _compute_lj_lrc(parameters, idxs_i, idxs_j, n_ij_interactions, n_particles, rs, rc, volume):
    """Computes the long range dispersion correction, possibly with a switching function."""
    eps_ii, sig_ii = parameters[:, 0], parameters[:, 1]
    eps_ij, sig_ij = lorentz_berthelot(eps_ii[idxs_i], eps_ii[idxs_j], sig_ii[idxs_i], sig_ii[idxs_j])

    integral = sig_ij**12 / (9 * rc**9) - sig_ij**6 / (3 * rc**3)

    if rs is not None:
        integral_rc = _integrate_lj_switch(rc, rs, rc, sig_ij)
        integral_rs = _integrate_lj_switch(rs, rs, rc, sig_ij)

        integral += integral_rc - integral_rs

    integral = (n_ij_interactions * 4.0 * eps_ij * integral).sum(dim=-1)
    integral /= n_ij_interactions.sum()

    return 2.0 * n_particles**2 * torch.pi / volume * integral
