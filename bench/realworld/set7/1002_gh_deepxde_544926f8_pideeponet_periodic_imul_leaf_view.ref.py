# reference fix for 1002: commit 544926f8, `x = x * 2 * np.pi` in the feature transform.
import math

import torch
import torch.nn as nn

sin = torch.sin
cos = torch.cos
concat = torch.cat


class FNN(nn.Module):
    def __init__(self, layer_sizes, activation):
        super().__init__()
        self.linears = nn.ModuleList()
        for i in range(1, len(layer_sizes)):
            layer = nn.Linear(layer_sizes[i - 1], layer_sizes[i])
            nn.init.xavier_normal_(layer.weight)
            nn.init.zeros_(layer.bias)
            self.linears.append(layer)
        self.activation = activation

    def forward(self, x):
        for linear in self.linears[:-1]:
            x = self.activation(linear(x))
        return self.linears[-1](x)


class DeepONetCartesianProd(nn.Module):
    def __init__(self, layer_sizes_branch, layer_sizes_trunk, activation):
        super().__init__()
        self.branch = FNN(layer_sizes_branch, torch.tanh)
        self.trunk = FNN(layer_sizes_trunk, torch.tanh)
        self.activation_trunk = torch.tanh
        self.b = nn.Parameter(torch.tensor(0.0))
        self._input_transform = None

    def apply_feature_transform(self, transform):
        self._input_transform = transform

    def forward(self, inputs):
        x_func = inputs[0]
        x_loc = inputs[1]
        x_func = self.branch(x_func)
        if self._input_transform is not None:
            x_loc = self._input_transform(x_loc)
        x_loc = self.activation_trunk(self.trunk(x_loc))
        x = torch.einsum("bi,ni->bn", x_func, x_loc)
        x += self.b
        return x


def periodic(x):
    x, t = x[:, :1], x[:, 1:]
    x = x * 2 * math.pi
    return concat([cos(x), sin(x), cos(2 * x), sin(2 * x), t], 1)


def compute():
    torch.manual_seed(0)
    net = DeepONetCartesianProd([10, 16, 16], [5, 16, 16], "tanh")
    net.apply_feature_transform(periodic)
    sensors = torch.linspace(0, 1, 10)
    v = torch.stack([torch.sin(2 * math.pi * sensors), torch.cos(2 * math.pi * sensors)])
    x_pde = torch.rand(12, 2)
    x_ic = torch.cat([torch.rand(4, 1), torch.zeros(4, 1)], 1)
    x_loc = torch.cat([x_pde, x_ic])
    # dde.Model (PyTorch backend): inputs = tuple(map(lambda x: torch.as_tensor(x).requires_grad_(), inputs))
    inputs = tuple(map(lambda x: torch.as_tensor(x).requires_grad_(), (v, x_loc)))
    y = net(inputs)
    residuals = []
    for i in range(y.shape[0]):
        dy = torch.autograd.grad(y[i].sum(), inputs[1], create_graph=True)[0]
        residuals.append(dy[:12, 1] + dy[:12, 0])
    residual = torch.stack(residuals)
    ic_target = torch.stack([torch.sin(2 * math.pi * x_ic[:, 0]), torch.cos(2 * math.pi * x_ic[:, 0])])
    loss = (residual ** 2).mean() + ((y[:, 12:] - ic_target) ** 2).mean()
    loss.backward()
    return {n: p.grad for n, p in net.named_parameters()}


if __name__ == "__main__":
    compute()
