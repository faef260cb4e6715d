# alphafold2_pytorch/utils.py (lucidrains/alphafold2) as of the parent of commit 8d5e948 ("solve inplace. sorry for
# masked_fills"): expand_dims_to and mds_torch (metric multidimensional scaling of a predicted distance matrix into
# 3D coordinates, Guttman transform), copied. The culprit: `dist_mat[ dist_mat == 0 ] += 1e-7` on the output of
# `torch.cdist`, whose backward needs its result. The fix: `dist_mat = torch.cdist(...).clone()` and
# `dist_mat[ dist_mat == 0 ] = 1e-7`.
# Stand-in: `np.arange(N)` is `torch.arange(N)` (numpy is not installed here); nothing else changed.
import torch


def expand_dims_to(t, length = 3):
    if length == 0:
        return t
    return t.reshape(*((1,) * length), *t.shape) # will work with both torch and numpy

def mds_torch(pre_dist_mat, weights=None, iters=10, tol=1e-5, verbose=2):
    """ Gets distance matrix. Outputs 3d. See below for wrapper. 
        Assumes (for now) distrogram is (N x N) and symmetric
        Outs: 
        * best_3d_coords: (3 x N)
        * historic_stress 
    """
    device = pre_dist_mat.device

    if weights is None:
        weights = torch.ones_like(pre_dist_mat)

    # ensure batched MDS
    pre_dist_mat = expand_dims_to(pre_dist_mat, length = ( 3 - len(pre_dist_mat.shape) ))

    # start
    batch, N, _ = pre_dist_mat.shape
    diag_idxs = torch.arange(N)  # stand-in for np.arange(N) (no numpy here)
    his = []
    # init random coords
    best_stress = float("Inf") * torch.ones(batch, device = device)
    best_3d_coords = 2*torch.rand(batch, N, 3, device = device) - 1
    # iterative updates:
    for i in range(iters):
        # compute distance matrix of coords and stress
        dist_mat = torch.cdist(best_3d_coords, best_3d_coords, p=2)
        stress   = ( weights * (dist_mat - pre_dist_mat)**2 ).sum(dim=(-1,-2)) * 0.5
        # perturb - update X using the Guttman transform - sklearn-like
        dist_mat[ dist_mat == 0 ] += 1e-7
        ratio = weights * (pre_dist_mat / dist_mat)
        B = -ratio
        B[:, diag_idxs, diag_idxs] += ratio.sum(dim=-1)

        # update
        coords = (1. / N * torch.matmul(B, best_3d_coords))
        dis = torch.norm(coords, dim=(-1, -2))
        if verbose >= 2:
            print('it: %d, stress %s' % (i, stress))
        # update metrics if relative improvement above tolerance
        if (best_stress - stress / dis).mean() <= tol:
            if verbose:
                print('breaking at iteration %d with stress %s' % (i,
                                                                   stress / dis))
            break

        best_3d_coords = coords
        best_stress = (stress / dis)
        his.append(best_stress)

    return torch.transpose(best_3d_coords, -1,-2), torch.cat(his)
