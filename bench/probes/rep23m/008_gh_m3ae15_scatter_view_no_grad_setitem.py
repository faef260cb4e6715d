# source: https://github.com/ccarliu/m3ae/issues/15
# pattern: custom_function_view_setitem
# codemod_fixable: yes
# error: C
# ref_semantics: same
# M3AE (multi-modal masked autoencoder for brain MRI), model/Unet.py forward under nn.DataParallel: each modality
# channel l of the input is mixed with a learnt "modality image", `x[l] = x[l] * mask + self.limage[...] * (1-mask)`.
# DataParallel's Scatter (a custom autograd Function) hands the module a view of the batch made in its forward; the
# batch does not require grad, so the view has no grad_fn, and writing a value that requires grad into it fails:
# "A view was created in no_grad mode and is being modified inplace with grad mode enabled. This view was created
# inside a custom Function (or because an input was returned as-is) ...". The issue has no answer; the reference is
# the error's own advice, clone the custom Function's output (`x = x.clone()` before the writes).
# Stand-ins: a one-device Scatter (`chunk(1)` in a custom Function), 2 modalities of 4x4x4, a 1x1x1 conv.
import torch
import torch.nn as nn


class Scatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, batch):
        return batch.chunk(1, 0)

    @staticmethod
    def backward(ctx, *grads):
        return torch.cat(grads, 0)


class Unet(nn.Module):
    def __init__(self, modalities=2):
        super().__init__()
        self.limage = nn.Parameter(torch.randn(1, modalities, 4, 4, 4) * 0.1)
        self.conv = nn.Conv3d(modalities, 3, 1)

    def forward(self, x, mask):
        x = x.transpose(0, 1)  # modality first
        limage = self.limage.transpose(0, 1)
        for l in range(x.shape[0]):
            x[l] = x[l] * mask[l] + limage[l] * (1 - mask[l])  # not detach here
        return self.conv(x.transpose(0, 1))


def compute():
    torch.manual_seed(0)
    model = Unet()
    batch = torch.randn(1, 2, 4, 4, 4)
    mask = (torch.rand(2, 1, 4, 4, 4) > 0.5).float()
    (inputs,) = Scatter.apply(batch)
    out = model(inputs, mask)
    out.pow(2).mean().backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
