# reference fix for 415: ezyang's fix in the thread: `x[0, :, 0, 0] = x[0, :, 0, 0].clone() * var`.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(12, 12, 3)

    def forward(self, x, y):
        x = self.conv(x)
        y = self.conv(y)
        var = y.flatten()
        x[0, :, 0, 0] = x[0, :, 0, 0].clone() * var

        loss = torch.mean(x)
        return loss


def compute():
    torch.manual_seed(0)
    model = Model()
    x = torch.randn([1, 12, 3, 3]).float()
    y = torch.randn([1, 12, 3, 3]).float()
    loss = model(x, y)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
