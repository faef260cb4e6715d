# source: https://github.com/lzx1413/PytorchSSD/issues/72 (layers/modules/l2norm.py, same module as amdegroot/ssd.pytorch)
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: differs
# L2Norm.forward: norm = x.pow(2)...; `x /= norm` overwrites x, which pow() (and the preceding in-place ReLU) saved.
# Because x is the caller's conv4_3 tensor, the in-place division also leaks into the rest of the VGG trunk in the
# original; the accepted fix (x = x / norm) removes that side effect as well.
import torch
import torch.nn as nn
import torch.nn.init as init


class L2Norm(nn.Module):
    def __init__(self,n_channels, scale):
        super(L2Norm,self).__init__()
        self.n_channels = n_channels
        self.gamma = scale or None
        self.eps = 1e-10
        self.weight = nn.Parameter(torch.Tensor(self.n_channels))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight,self.gamma)

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt()+self.eps
        x /= norm
        out = self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x
        return out


class SSD(nn.Module):
    # trimmed: a 2-stage VGG trunk, L2Norm on conv4_3 and one conf head per source
    def __init__(self, num_classes=3):
        super(SSD, self).__init__()
        self.vgg = nn.ModuleList([
            nn.Conv2d(3, 8, kernel_size=3, padding=1), nn.ReLU(inplace=True),   # ... conv4_3, relu
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(8, 8, kernel_size=3, padding=1), nn.ReLU(inplace=True),   # ... fc7
        ])
        self.L2Norm = L2Norm(8, 20)
        self.conf = nn.ModuleList([nn.Conv2d(8, 2 * num_classes, 3, padding=1),
                                   nn.Conv2d(8, 2 * num_classes, 3, padding=1)])

    def forward(self, x):
        sources = list()
        conf = list()
        # apply vgg up to conv4_3 relu
        for k in range(2):
            x = self.vgg[k](x)
        s = self.L2Norm(x)
        sources.append(s)
        # apply vgg up to fc7
        for k in range(2, len(self.vgg)):
            x = self.vgg[k](x)
        sources.append(x)
        for (x, c) in zip(sources, self.conf):
            conf.append(c(x).permute(0, 2, 3, 1).contiguous())
        return torch.cat([o.view(o.size(0), -1) for o in conf], 1)


def compute():
    torch.manual_seed(0)
    net = SSD()
    out = net(torch.randn(2, 3, 8, 8))
    out.pow(2).mean().backward()
    return {name: p.grad for name, p in net.named_parameters()}


if __name__ == "__main__":
    compute()
