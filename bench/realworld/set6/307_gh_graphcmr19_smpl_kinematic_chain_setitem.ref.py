# reference fix for 307: the fix, the transforms written into a clone `G_new` (parents read from G, hence differs).
import torch
import torch.nn as nn

NV = 30
SMPL_PARENTS = [0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 12, 13, 14, 16, 17, 18, 19, 20, 21]


class SMPL(nn.Module):
    def __init__(self):
        super(SMPL, self).__init__()
        g = torch.Generator().manual_seed(1)
        self.register_buffer('J_regressor', torch.rand(24, NV, generator=g) / NV)
        self.register_buffer('weights', torch.softmax(torch.randn(NV, 24, generator=g), dim=-1))
        self.register_buffer('posedirs', 0.01 * torch.randn(NV, 3, 207, generator=g))
        self.register_buffer('v_template', torch.randn(NV, 3, generator=g))
        self.register_buffer('shapedirs', 0.1 * torch.randn(NV, 3, 10, generator=g))
        self.parent = SMPL_PARENTS

    def forward(self, pose, beta):
        device = pose.device
        batch_size = pose.shape[0]
        v_template = self.v_template[None, :]
        shapedirs = self.shapedirs.view(-1, 10)[None, :].expand(batch_size, -1, -1)
        beta = beta[:, :, None]
        v_shaped = torch.matmul(shapedirs, beta).view(-1, NV, 3) + v_template
        # batched sparse matmul not supported in pytorch
        J = []
        for i in range(batch_size):
            J.append(torch.matmul(self.J_regressor, v_shaped[i]))
        J = torch.stack(J, dim=0)
        # input it rotmat: (bs,24,3,3)
        R = pose
        I_cube = torch.eye(3)[None, None, :].to(device)
        lrotmin = (R[:, 1:, :] - I_cube).view(batch_size, -1)
        posedirs = self.posedirs.view(-1, 207)[None, :].expand(batch_size, -1, -1)
        v_posed = v_shaped + torch.matmul(posedirs, lrotmin[:, :, None]).view(-1, NV, 3)
        J_ = J.clone()
        J_[:, 1:, :] = J[:, 1:, :] - J[:, self.parent, :]
        G_ = torch.cat([R, J_[:, :, :, None]], dim=-1)
        pad_row = torch.FloatTensor([0, 0, 0, 1]).to(device).view(1, 1, 1, 4).expand(batch_size, 24, -1, -1)
        G_ = torch.cat([G_, pad_row], dim=2)
        G = G_.clone()
        G_new = G.clone()
        for i in range(1, 24):
            G_new[:, i, :, :] = torch.matmul(G[:, self.parent[i - 1], :, :], G_[:, i, :, :])
        G = G_new
        rest = torch.cat([J, torch.zeros(batch_size, 24, 1).to(device)], dim=2).view(batch_size, 24, 4, 1)
        zeros = torch.zeros(batch_size, 24, 4, 3).to(device)
        rest = torch.cat([zeros, rest], dim=-1)
        rest = torch.matmul(G, rest)
        G = G - rest
        T = torch.matmul(self.weights, G.permute(1, 0, 2, 3).contiguous().view(24, -1)).view(
            NV, batch_size, 4, 4).transpose(0, 1)
        rest_shape_h = torch.cat([v_posed, torch.ones_like(v_posed)[:, :, [0]]], dim=-1)
        v = torch.matmul(T, rest_shape_h[:, :, :, None])[:, :, :3, 0]
        return v


def compute():
    torch.manual_seed(0)
    smpl = SMPL()
    axis = 0.3 * torch.randn(2, 24, 3)
    pred_theta = torch.linalg.matrix_exp(torch.cross(
        axis[..., None, :].expand(2, 24, 3, 3), torch.eye(3).expand(2, 24, 3, 3), dim=-1)).requires_grad_()
    pred_beta = torch.randn(2, 10, requires_grad=True)
    pred_vertices = smpl(pred_theta, pred_beta)
    torch.sum(pred_vertices).backward()
    return {"pose_grad": pred_theta.grad, "beta_grad": pred_beta.grad}


if __name__ == "__main__":
    compute()
