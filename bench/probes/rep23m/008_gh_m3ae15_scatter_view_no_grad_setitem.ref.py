# reference: the error's advice, clone the custom Function's output before the writes
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
        x = x.clone()
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
