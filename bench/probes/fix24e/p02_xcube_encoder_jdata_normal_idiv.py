# source: https://github.com/nv-tlabs/XCube/issues/33
# error: A
# XCube's autoencoder Encoder normalises the splatted normals in place:
# `input_normal.jdata /= (input_normal.jdata.norm(dim=1, keepdim=True) + 1e-6)`; norm() saved jdata for backward.
# Stand-ins: JaggedTensor is a plain holder of `.jdata`; the grid splat is a linear map of the reference normals.
import torch
import torch.nn as nn


class JaggedTensor:
    def __init__(self, jdata):
        self.jdata = jdata


class Grid:
    def __init__(self, n_voxels, n_points):
        self.weights = torch.rand(n_voxels, n_points)

    def splat_trilinear(self, ref_xyz, values):
        return JaggedTensor(self.weights @ values.jdata)


class Encoder(nn.Module):
    def __init__(self, c_dim=8):
        super().__init__()
        self.pos_embedder = nn.Linear(3, 6)
        self.mix_fc = nn.Linear(9, c_dim)

    def forward(self, grid, coords, ref_xyz, input_normal):
        unet_feat = self.pos_embedder(coords)
        input_normal = grid.splat_trilinear(ref_xyz, JaggedTensor(input_normal))
        input_normal.jdata /= (input_normal.jdata.norm(dim=1, keepdim=True) + 1e-6)
        unet_feat = torch.cat([unet_feat, input_normal.jdata], dim=1)
        unet_feat = self.mix_fc(unet_feat)
        return unet_feat


def compute():
    torch.manual_seed(0)
    enc = Encoder()
    grid = Grid(5, 7)
    normals = torch.randn(7, 3, requires_grad=True)
    out = enc(grid, torch.randn(5, 3), torch.randn(7, 3), normals)
    out.pow(2).mean().backward()
    grads = {name: p.grad for name, p in enc.named_parameters()}
    grads["normals"] = normals.grad
    return grads


if __name__ == "__main__":
    compute()
