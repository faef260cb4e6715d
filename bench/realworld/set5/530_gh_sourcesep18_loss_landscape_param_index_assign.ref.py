# reference fix for 530 (the thread's fix, commit 9208681): write the candidate values under torch.no_grad().
import torch
from torch import nn


class Line(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(1, 1)

    def forward(self, x):
        y = self.layer(x)
        return y


def compute():
    torch.manual_seed(0)
    to_tensor = lambda x: x.reshape(-1, 1).float()
    line = Line()

    m = torch.randn(()).item()
    b = torch.randn(()).item()
    x = torch.linspace(-10, 10, 100)
    noise = torch.randn(100) * 0.1
    y = m * x + b + noise

    possible_m = torch.linspace(-2, 2, 7)
    possible_b = torch.linspace(-2, 2, 7)
    loss = torch.empty((possible_m.shape[0], possible_b.shape[0]))

    for i, m_hat in enumerate(possible_m):
        for j, b_hat in enumerate(possible_b):
            with torch.no_grad():
                line.layer.weight[0, 0] = m_hat
                line.layer.bias[0] = b_hat
            y_hat = line(to_tensor(x))
            _loss = (y_hat - to_tensor(y)).abs().mean()
            loss[i, j] = _loss.item()

    idx = divmod(int(torch.argmin(loss)), loss.shape[1])
    m_hat = possible_m[idx[0]]
    b_hat = possible_b[idx[1]]

    with torch.no_grad():
        line.layer.weight[0, 0] = m_hat
        line.layer.bias[0] = b_hat

    line.zero_grad()
    y_hat = line(to_tensor(x))
    _loss = (y_hat - to_tensor(y)).abs().mean()
    _loss.backward()
    return {"loss_landscape": loss.clone(), "weight": line.layer.weight.detach().clone(),
            "bias": line.layer.bias.detach().clone(), "weight.grad": line.layer.weight.grad.clone(),
            "bias.grad": line.layer.bias.grad.clone()}


if __name__ == "__main__":
    compute()
