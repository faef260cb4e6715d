# reference fix for 706: the fix from the issue, `theta = theta * 2. * math.pi`.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class PCAE(nn.Module):
    def __init__(self, config, num_capsules=24, template_size=11, num_templates=24, num_feature_maps=24):
        super(PCAE, self).__init__()
        self.num_capsules = num_capsules
        self.num_feature_maps = num_feature_maps
        self.capsules = nn.Sequential(nn.Conv2d(1, 16, 3, stride=2),
                                      nn.ReLU(),
                                      nn.Conv2d(16, 16, 3, stride=2),
                                      nn.ReLU(),
                                      nn.Conv2d(16, 16, 3, stride=1),
                                      nn.ReLU(),
                                      nn.Conv2d(16, 16, 3, stride=1),
                                      nn.ReLU(),
                                      nn.Conv2d(16, num_capsules * num_feature_maps, 1, stride=1))

        self.templates = nn.ParameterList([nn.Parameter(torch.randn(1, template_size, template_size))
                                           for _ in range(num_templates)])
        self.soft_max = nn.Softmax(1)
        self.relu = nn.ReLU()
        self.sigmoid = nn.Sigmoid()
        self.epsilon = torch.tensor(1e-6)

    def forward(self, x, device, mode='train'):
        outputs = self.capsules(x)
        outputs = outputs.view(-1, self.num_capsules, self.num_feature_maps, *outputs.size()[2:])  # (B,M,24,2,2)
        attention = outputs[:, :, -1, :, :].unsqueeze(2)
        attention_soft = self.soft_max(attention.view(*attention.size()[:3], -1)).view_as(attention)
        feature_maps = outputs[:, :, :-1, :, :]
        part_capsule_param = torch.sum(torch.sum(feature_maps * attention_soft, dim=-1), dim=-1)  # (B,M,23)

        if mode == 'train':
            noise_1 = torch.FloatTensor(*part_capsule_param.size()[:2]).uniform_(-2, 2).to(device)
        else:
            noise_1 = torch.zeros(*part_capsule_param.size()[:2]).to(device)
        x_m, d_m, c_z = self.relu(part_capsule_param[:, :, :6]), self.sigmoid(part_capsule_param[:, :, 6] + noise_1).view(*part_capsule_param.size()[:2], 1), self.relu(part_capsule_param[:, :, 7:])

        # Affine Transform
        B, _, _, target_size = x.size()
        transformed_templates = [F.grid_sample(self.templates[i].repeat(B, 1, 1, 1).to(device),
                                               F.affine_grid(
                                                   self.geometric_transform(x_m[:, i, :]),  # pose
                                                   torch.Size((B, 1, target_size, target_size)),  # size
                                                   align_corners=False
                                               ), align_corners=False)
                                 for i in range(self.num_capsules)]
        transformed_templates = torch.cat(transformed_templates, 1)
        mix_prob = self.soft_max(d_m * transformed_templates.view(*transformed_templates.size()[:2], -1)).view_as(transformed_templates)
        detach_x = x.data
        std = detach_x.view(*x.size()[:2], -1).std(-1).unsqueeze(1)  # (B,1,1)
        std = std * 1 + self.epsilon
        multiplier = (std * math.sqrt(math.pi * 2)).reciprocal().unsqueeze(-1)  # (B,1,1,1)
        power_multiply = (-(2 * (std ** 2))).reciprocal().unsqueeze(-1)  # (B,1,1,1)
        gaussians = multiplier * ((((detach_x - transformed_templates) ** 2) * power_multiply).exp())  # (B,M,28,28)
        pre_ll = (gaussians * mix_prob * 1.0) + self.epsilon
        log_likelihood = torch.sum(pre_ll, dim=1).log().sum(-1).sum(-1).mean()  # scalar loss
        x_m_detach = x_m.data
        d_m_detach = d_m.data
        template_det = []
        for template in self.templates:
            template_det.append(template.data.view(1, -1))
        template_detached = torch.cat(template_det, 0).unsqueeze(0).expand(x_m_detach.shape[0], -1, -1).to(device)  # (B,M,11*11)
        input_ocae = torch.cat([d_m_detach, x_m_detach, template_detached, c_z], -1)  # (B,M,144)

        return log_likelihood, input_ocae, x_m_detach, d_m_detach

    @staticmethod
    def geometric_transform(pose_tensor, similarity=False, nonlinear=True):
        """Convers paramer tensor into an affine or similarity transform.
        This function is adapted from:
        https://github.com/akosiorek/stacked_capsule_autoencoders/blob/master/capsules/math_ops.py
        """

        scale_x, scale_y, theta, shear, trans_x, trans_y = torch.split(pose_tensor, 1, -1)

        if nonlinear:
            scale_x, scale_y = torch.sigmoid(scale_x) + 1e-2, torch.sigmoid(scale_y) + 1e-2
            trans_x, trans_y, shear = torch.tanh(trans_x * 5.), torch.tanh(trans_y * 5.), torch.tanh(shear * 5.)
            theta = theta * 2. * math.pi
        else:
            scale_x, scale_y = (abs(i) + 1e-2 for i in (scale_x, scale_y))

        c, s = torch.cos(theta), torch.sin(theta)

        if similarity:
            scale = scale_x
            pose = [scale * c, -scale * s, trans_x, scale * s, scale * c, trans_y]

        else:
            pose = [
                scale_x * c + shear * scale_y * s, -scale_x * s + shear * scale_y * c,
                trans_x, scale_y * s, scale_y * c, trans_y
            ]

        pose = torch.cat(pose, -1)

        # convert to a matrix
        shape = list(pose.shape[:-1])
        shape += [2, 3]
        pose = torch.reshape(pose, shape)

        return pose


def compute():
    torch.manual_seed(0)
    device = torch.device("cpu")
    model = PCAE(None, num_capsules=4, num_templates=4)
    x = torch.rand(2, 1, 28, 28)
    log_likelihood, input_ocae, x_m, d_m = model(x, device)
    (-log_likelihood + input_ocae[..., -16:].pow(2).mean()).backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
