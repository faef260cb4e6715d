# reference fix for 624 (as in VRCNet forks): Linear_ResBlock uses nn.ReLU(inplace=False)
import torch
import torch.nn as nn
import torch.nn.functional as F


class Linear_ResBlock(nn.Module):
    def __init__(self, input_size=1024, output_size=256):
        super(Linear_ResBlock, self).__init__()
        self.conv1 = nn.Linear(input_size, input_size)
        self.conv2 = nn.Linear(input_size, output_size)
        self.conv_res = nn.Linear(input_size, output_size)

        self.af = nn.ReLU(inplace=False)

    def forward(self, feature):
        return self.conv2(self.af(self.conv1(self.af(feature)))) + self.conv_res(feature)


class PCN_encoder(nn.Module):
    """Stand-in: shared point MLP + max pooling."""

    def __init__(self, output_size=1024):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 32, 1)
        self.conv2 = nn.Conv1d(32, output_size, 1)

    def forward(self, x):
        return self.conv2(F.relu(self.conv1(x))).max(dim=2)[0]


class Decoder(nn.Module):
    """Stand-in for MSAP_SKN_decoder: global feature -> fine point set."""

    def __init__(self, global_feature_size, num_fine):
        super().__init__()
        self.num_fine = num_fine
        self.fc = nn.Linear(global_feature_size, num_fine * 3)

    def forward(self, feat, x):
        return self.fc(feat).view(-1, 3, self.num_fine)


def calc_cd(output, gt):
    d = torch.cdist(output, gt)
    return d.min(2)[0].mean(1) + d.min(1)[0].mean(1), None


class Model(nn.Module):
    def __init__(self, size_z=8, global_feature_size=32, num_points=16):
        super(Model, self).__init__()
        self.size_z = size_z
        self.encoder = PCN_encoder(output_size=global_feature_size)
        self.posterior_infer1 = Linear_ResBlock(input_size=global_feature_size, output_size=global_feature_size)
        self.posterior_infer2 = Linear_ResBlock(input_size=global_feature_size, output_size=size_z * 2)
        self.prior_infer = Linear_ResBlock(input_size=global_feature_size, output_size=size_z * 2)
        self.generator = Linear_ResBlock(input_size=size_z, output_size=global_feature_size)
        self.decoder = Decoder(global_feature_size, num_points)

    def forward(self, x, gt, is_training=True, alpha=None):
        num_input = x.size()[2]
        y = gt.transpose(1, 2)[:, :, :num_input].contiguous()  # stand-in for furthest point sampling of gt
        gt = torch.cat([gt, gt], dim=0)
        points = torch.cat([x, y], dim=0)
        x = torch.cat([x, x], dim=0)
        feat = self.encoder(points)

        feat_x, feat_y = feat.chunk(2)
        o_x = self.posterior_infer2(self.posterior_infer1(feat_x))
        q_mu, q_std = torch.split(o_x, self.size_z, dim=1)
        o_y = self.prior_infer(feat_y)
        p_mu, p_std = torch.split(o_y, self.size_z, dim=1)
        q_std = F.softplus(q_std)
        p_std = F.softplus(p_std)
        q_distribution = torch.distributions.Normal(q_mu, q_std)
        p_distribution = torch.distributions.Normal(p_mu, p_std)
        p_distribution_fix = torch.distributions.Normal(p_mu.detach(), p_std.detach())
        m_distribution = torch.distributions.Normal(torch.zeros_like(p_mu), torch.ones_like(p_std))
        z_q = q_distribution.rsample()
        z_p = p_distribution.rsample()
        z = torch.cat([z_q, z_p], dim=0)
        feat = torch.cat([feat_x, feat_x], dim=0)

        feat += self.generator(z)

        fine = self.decoder(feat, x)
        fine = fine.transpose(1, 2).contiguous()

        dl_rec = torch.distributions.kl_divergence(m_distribution, p_distribution)
        dl_g = torch.distributions.kl_divergence(p_distribution_fix, q_distribution)
        loss4, _ = calc_cd(fine, gt)
        total_train_loss = loss4.mean() * alpha
        total_train_loss += (dl_rec.mean() + dl_g.mean()) * 20
        return fine, loss4, total_train_loss


def compute():
    torch.manual_seed(0)
    net = Model()
    inputs = torch.randn(2, 3, 12)  # partial point clouds (B, 3, N)
    gt = torch.randn(2, 16, 3)      # complete point clouds (B, M, 3)
    out2, loss2, net_loss = net(inputs, gt, alpha=0.5)
    net_loss.backward()
    return {n: p.grad for n, p in net.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
