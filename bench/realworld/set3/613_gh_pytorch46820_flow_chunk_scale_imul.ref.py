# reference fix for 613 (the reporter's fix in the thread): u1 = u_scale*u; u = u1.clone() (same for v)
import torch
import torch.nn as nn
import torch.nn.functional as F


class FlowHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 2, 3, padding=1)

    def forward(self, im1, im2, out_size):
        flow = self.conv(torch.cat([im1, im2], 1))
        h, w = flow.shape[-2:]
        flow = F.interpolate(flow, size=out_size, mode='bilinear', align_corners=False)
        u_scale, v_scale = out_size[1] / w, out_size[0] / h
        u, v = flow.chunk(2, dim=1)
        u1 = u_scale * u
        u = u1.clone()
        v1 = v_scale * v
        v = v1.clone()
        return torch.cat([u, v], dim=1)


def compute():
    torch.manual_seed(0)
    net = FlowHead()
    im1, im2 = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)
    flow = net(im1, im2, (16, 16))
    target = torch.randn(2, 2, 16, 16)
    loss = (flow - target).abs().mean()
    loss.backward()
    return {n: p.grad for n, p in net.named_parameters()}


if __name__ == "__main__":
    compute()
