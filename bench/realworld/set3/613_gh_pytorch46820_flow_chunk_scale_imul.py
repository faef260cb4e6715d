# source: https://github.com/pytorch/pytorch/issues/46820
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# "simple v *= v_scale error": optical-flow code splits a predicted flow field with `u, v = flow.chunk(2, dim=1)` and
# rescales the components in place, `u *= u_scale` / `v *= v_scale`. In-place ops on chunk() outputs were deprecated
# in 1.7 (warning + internal assert) and are now the view error "Output 0 of SplitBackward0 is a view and is being
# modified inplace". The reporter's working fix in the thread: `u1 = u_scale*u; u = u1.clone()` (same for v).
# Harness (not in the thread): a conv predicts the flow at low resolution, it is upsampled, its components rescaled
# by the size ratio and concatenated again; a warping-style loss is applied.
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
        u *= u_scale
        v *= v_scale
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
