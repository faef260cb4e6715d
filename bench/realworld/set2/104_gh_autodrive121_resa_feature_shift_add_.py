# source: https://github.com/voldemortX/pytorch-auto-drive/issues/121 (same error in #81; fixed by PR #139)
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# RESA (recurrent feature-shift aggregator for lane detection) accumulates the shifted-and-convolved messages
# into its input with `x.add_(...)`. The input is the output of the channel reducer's ReLU, which saved it for
# backward, so after the 4*iter in-place adds the ReLU backward sees version 4*iter instead of 0.
import torch
import torch.nn as nn
import torch.nn.functional as F


class RESA(nn.Module):
    def __init__(self, num_channels=128, iteration=5, alpha=2.0, trace_arg=None):
        super(RESA, self).__init__()
        self.iter = iteration
        self.alpha = alpha
        self.height = trace_arg['h']
        self.width = trace_arg['w']

        for i in range(self.iter):
            conv_vert1 = nn.Conv2d(num_channels, num_channels, (1, 9), padding=(0, 4), bias=False)
            conv_vert2 = nn.Conv2d(num_channels, num_channels, (1, 9), padding=(0, 4), bias=False)
            setattr(self, 'conv_d' + str(i), conv_vert1)
            setattr(self, 'conv_u' + str(i), conv_vert2)

            conv_hori1 = nn.Conv2d(num_channels, num_channels, (9, 1), padding=(4, 0), bias=False)
            conv_hori2 = nn.Conv2d(num_channels, num_channels, (9, 1), padding=(4, 0), bias=False)
            setattr(self, 'conv_r' + str(i), conv_hori1)
            setattr(self, 'conv_l' + str(i), conv_hori2)

            idx_d = (torch.arange(self.height) + self.height // 2 ** (self.iter - i)) % self.height
            setattr(self, 'idx_d' + str(i), idx_d)
            idx_u = (torch.arange(self.height) - self.height // 2 ** (self.iter - i)) % self.height
            setattr(self, 'idx_u' + str(i), idx_u)
            idx_r = (torch.arange(self.width) + self.width // 2 ** (self.iter - i)) % self.width
            setattr(self, 'idx_r' + str(i), idx_r)
            idx_l = (torch.arange(self.width) - self.width // 2 ** (self.iter - i)) % self.width
            setattr(self, 'idx_l' + str(i), idx_l)

    def forward(self, x):
        for direction in ['d', 'u']:
            for i in range(self.iter):
                conv = getattr(self, 'conv_' + direction + str(i))
                idx = getattr(self, 'idx_' + direction + str(i))
                x.add_(self.alpha * F.relu(conv(x[:, :, idx, :])))

        for direction in ['r', 'l']:
            for i in range(self.iter):
                conv = getattr(self, 'conv_' + direction + str(i))
                idx = getattr(self, 'idx_' + direction + str(i))
                x.add_(self.alpha * F.relu(conv(x[:, :, :, idx])))

        return x


class RESALaneNet(nn.Module):
    """Backbone stand-in -> channel reducer (conv-bn-relu) -> RESA -> per-pixel lane classifier."""

    def __init__(self, in_channels=3, num_channels=8, num_classes=3, h=8, w=10):
        super().__init__()
        self.backbone = nn.Conv2d(in_channels, 16, 3, padding=1)
        self.channel_reducer = nn.Sequential(
            nn.Conv2d(16, num_channels, 1, bias=False), nn.BatchNorm2d(num_channels), nn.ReLU())
        self.spatial_conv = RESA(num_channels=num_channels, iteration=3, alpha=2.0, trace_arg={'h': h, 'w': w})
        self.decoder = nn.Conv2d(num_channels, num_classes, 1)

    def forward(self, img):
        x = self.channel_reducer(self.backbone(img))
        x = self.spatial_conv(x)
        return self.decoder(x)


def compute():
    torch.manual_seed(0)
    net = RESALaneNet()
    img = torch.randn(2, 3, 8, 10)
    target = torch.randint(0, 3, (2, 8, 10))
    loss = F.cross_entropy(net(img), target)
    loss.backward()
    return {name: p.grad for name, p in net.named_parameters()}


if __name__ == "__main__":
    compute()
