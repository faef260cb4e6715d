# reference fix for 601 (issue thread, confirmed by the reporter): detached mask, out-of-place blend
import torch
import torch.nn as nn


def STN(image2_tensor, H_tf, offsets=()):
    """Spatial Transformer Layer"""

    def _repeat(x, n_repeats):
        rep = torch.ones(1, n_repeats, dtype=x.dtype)
        x = torch.mm(x.reshape(-1, 1), rep)
        return x.reshape(-1)

    def _interpolate(im, x, y, out_size):
        num_batch, channels, height, width = im.shape
        device = im.device

        x, y = x.float().to(device), y.float().to(device)
        height_f, width_f = torch.tensor(height).float(), torch.tensor(width).float()
        out_height, out_width = out_size

        x = (x + 1.0) * (width_f - 1) / 2.0
        y = (y + 1.0) * (height_f - 1) / 2.0

        x0 = x.floor().int()
        x1 = x0 + 1
        y0 = y.floor().int()
        y1 = y0 + 1

        x0 = torch.clamp(x0, 0, width - 1)
        x1 = torch.clamp(x1, 0, width - 1)
        y0 = torch.clamp(y0, 0, height - 1)
        y1 = torch.clamp(y1, 0, height - 1)

        dim2 = width
        dim1 = width * height
        base = _repeat(torch.arange(num_batch) * dim1, out_height * out_width).to(device)
        base_y0 = base + y0 * dim2
        base_y1 = base + y1 * dim2
        idx_a = base_y0 + x0
        idx_b = base_y1 + x0
        idx_c = base_y0 + x1
        idx_d = base_y1 + x1

        im_flat = im.permute(0, 2, 3, 1).reshape(-1, channels).float()
        Ia, Ib, Ic, Id = im_flat[idx_a], im_flat[idx_b], im_flat[idx_c], im_flat[idx_d]

        x0_f = x0.float()
        x1_f = x1.float()
        y0_f = y0.float()
        y1_f = y1.float()
        wa = torch.unsqueeze(((x1_f - x) * (y1_f - y)), 1)
        wb = torch.unsqueeze(((x1_f - x) * (y - y0_f)), 1)
        wc = torch.unsqueeze(((x - x0_f) * (y1_f - y)), 1)
        wd = torch.unsqueeze(((x - x0_f) * (y - y0_f)), 1)

        output = wa * Ia + wb * Ib + wc * Ic + wd * Id
        return output

    def _meshgrid(height, width):
        x_t = torch.mm(torch.ones(height, 1), torch.linspace(-1.0, 1.0, width).unsqueeze(0))
        y_t = torch.mm(torch.linspace(-1.0, 1.0, height).unsqueeze(1), torch.ones(1, width))
        x_t_flat = x_t.reshape(1, -1)
        y_t_flat = y_t.reshape(1, -1)
        ones = torch.ones_like(x_t_flat)
        grid = torch.cat([x_t_flat, y_t_flat, ones], dim=0)
        return grid

    bs, nc, height, width = image2_tensor.shape
    device = image2_tensor.device

    is_nan = torch.isnan(H_tf.reshape(bs, 9)).any(dim=1)
    assert is_nan.sum() == 0
    H_tf = H_tf.reshape(-1, 3, 3).float()
    grid = _meshgrid(height, width).unsqueeze(0).expand(bs, -1, -1).to(device)

    T_g = torch.bmm(H_tf, grid)  # [bs,3,3] x [bs,3,w*h] -> [bs,3,w*h]
    x_s, y_s, t_s = torch.chunk(T_g, 3, dim=1)
    t_s_flat = t_s.reshape(-1)
    eps, maximal = 1e-2, 10.
    small_value = (t_s_flat.detach().abs() < eps).float()
    t_s_flat = t_s_flat * (1 - small_value) + small_value * eps

    x_s_flat = x_s.reshape(-1) / t_s_flat
    y_s_flat = y_s.reshape(-1) / t_s_flat

    input_transformed = _interpolate(image2_tensor, x_s_flat, y_s_flat, (height, width))
    output = input_transformed.reshape(bs, height, width, nc).permute(0, 3, 1, 2)
    return output


class TinyHEstimator(nn.Module):
    """Stand-in for the homography regressor: features -> 3x3 homography near identity."""

    def __init__(self, c=3):
        super().__init__()
        self.feat = nn.Conv2d(2 * c, 4, 3, padding=1)
        self.head = nn.Linear(4, 9)

    def forward(self, img1, img2):
        f = self.feat(torch.cat([img1, img2], 1)).mean((2, 3))
        return torch.eye(3).reshape(1, 9) + 0.05 * torch.tanh(self.head(f))


def compute():
    torch.manual_seed(0)
    net = TinyHEstimator()
    enc = nn.Conv2d(3, 3, 3, padding=1)
    img1, img2 = torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)  # test-time batch of 1
    H = net(img1, img2)
    warped = STN(enc(img2), H)
    loss = (warped - img1).abs().mean()
    loss.backward()
    grads = {n: p.grad for n, p in net.named_parameters()}
    grads.update({"enc." + n: p.grad for n, p in enc.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
