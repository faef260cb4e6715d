# source: https://github.com/huyvd7/pytorch-deepglr/issues/4
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Deep graph Laplacian regularisation denoiser (deepglr/deepglr.py): supporting_matrix(opt) fills the upper half of
# the pixel-graph adjacency A, sets `opt.connectivity_full = A.requires_grad_(True)` and then mirrors it with
# `for e, p in enumerate(A_pair): A[p[1], p[0]] = 1` -> "a view of a leaf Variable that requires grad is being used
# in an in-place operation" (deepglr.py line 484, reached from train_GLR.py). The issue has no answer; the same function in the
# authors' Chainer port does the mirroring with autograd switched off (`chainer.using_config('autograd', False)`),
# whose PyTorch equivalent is `with torch.no_grad():` (the ref). numpy/scipy graph construction is rewritten in
# torch; GTV.forward is trimmed to one graph-Laplacian solve (edge-weight temperature rescaled so weights do not
# underflow on random data).
import torch
import torch.nn as nn
import torch.nn.functional as F


def connected_adjacency(width, connect="8"):
    """8-connected pixel graph (upper-triangle pairs i < j), torch version of the repo's scipy construction."""
    pairs = []
    for r in range(width):
        for c in range(width):
            i = r * width + c
            for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < width and 0 <= cc < width:
                    pairs.append((i, rr * width + cc))
    return torch.tensor(sorted(pairs))


class OPT:
    def __init__(self, batch_size=2, width=6, connectivity="8", channels=3, u_max=100, u_min=10):
        self.batch_size = batch_size
        self.width = width
        self.edges = 0
        self.nodes = width ** 2
        self.connectivity = connectivity
        self.channels = channels
        self.u_max = u_max
        self.u_min = u_min
        self.dtype = torch.FloatTensor


def supporting_matrix(opt):
    dtype = opt.dtype
    width = opt.width

    A_pair = connected_adjacency(width, connect=opt.connectivity)

    opt.edges = A_pair.shape[0]
    H_dim0 = opt.edges
    H_dim1 = width ** 2

    I = torch.eye(width ** 2, width ** 2).type(dtype)
    A = torch.zeros(width ** 2, width ** 2).type(dtype)
    H = torch.zeros(H_dim0, H_dim1).type(dtype)
    for e, p in enumerate(A_pair):
        H[e, p[0]] = 1
        H[e, p[1]] = -1
        A[p[0], p[1]] = 1

    opt.I = I
    opt.pairs = A_pair
    opt.H = H
    opt.connectivity_full = A.requires_grad_(True)
    opt.connectivity_idx = torch.where(A > 0)

    for e, p in enumerate(A_pair):
        A[p[1], p[0]] = 1


class uu(nn.Module):
    def __init__(self):
        super(uu, self).__init__()
        self.u = torch.nn.Parameter(torch.rand(1), requires_grad=True)

    def forward(self):
        return self.u


class GTV(nn.Module):
    def __init__(self, opt):
        super(GTV, self).__init__()
        self.opt = opt
        self.cnnf = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 6, 3, padding=1))
        self.cnnu = uu()
        self.support_zmax = torch.ones(1) * 0.01
        self.support_L = torch.ones(opt.width ** 2, 1)
        self.base_W = torch.zeros(opt.batch_size, opt.channels, opt.width ** 2, opt.width ** 2)
        self.weight_sigma = 0.01

    def forward(self, xf):
        s = self.weight_sigma
        u = torch.clamp(self.cnnu.forward(), self.opt.u_min, self.opt.u_max)
        E = self.cnnf.forward(xf)
        Fs = (self.opt.H.matmul(E.view(E.shape[0], E.shape[1], self.opt.width ** 2, 1)) ** 2)
        w = torch.exp(-(Fs.sum(axis=1)) / (s ** 2 * 1e4))
        w = w.unsqueeze(1).repeat(1, self.opt.channels, 1, 1)
        W = self.base_W.clone()
        W[:, :, self.opt.connectivity_idx[0], self.opt.connectivity_idx[1]] = w.view(xf.shape[0], 3, -1)
        W[:, :, self.opt.connectivity_idx[1], self.opt.connectivity_idx[0]] = w.view(xf.shape[0], 3, -1)
        L = torch.diag_embed((W @ self.support_L).squeeze(-1)) - W
        y = xf.view(xf.shape[0], self.opt.channels, -1, 1)
        xhat = torch.linalg.solve(self.opt.I + 0.01 * u * L, y)
        return xhat.view_as(xf)


def compute():
    torch.manual_seed(0)
    opt = OPT()
    supporting_matrix(opt)
    glr = GTV(opt)
    nimg, rimg = torch.rand(2, 3, 6, 6), torch.rand(2, 3, 6, 6)
    loss = F.mse_loss(glr(nimg), rimg)
    loss.backward()
    out = {n: p.grad for n, p in glr.named_parameters()}
    out["connectivity_full"] = opt.connectivity_full.detach().clone()
    return out


if __name__ == "__main__":
    compute()
