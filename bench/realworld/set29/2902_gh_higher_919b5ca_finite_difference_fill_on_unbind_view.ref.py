# reference fix for 2902: commit 919b5ca (PR #85) in the test helper: `fdp.data.fill_((closure() - ground) / eps)`.
import copy

import torch
from torch import nn, optim


def finite_difference(model, closure, eps):
    fd_params = []
    ground = closure()
    for param in model.parameters():
        fd_param = torch.zeros_like(param)
        for p, fdp in zip(param.flatten(), fd_param.flatten()):
            p.data.add_(eps)
            fdp.data.fill_((closure() - ground) / eps)
            p.data.sub_(eps)
        fd_params.append(fd_param)
    return fd_params


def unrolled_grads(model, xs, lr):
    params = dict(model.named_parameters())
    for x in xs[:-1]:
        loss = torch.func.functional_call(model, params, (x,)).pow(2).sum()
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        params = {k: v - lr * g for (k, v), g in zip(params.items(), grads)}
    loss = torch.func.functional_call(model, params, (xs[-1],)).pow(2).sum()
    return torch.autograd.grad(loss, list(model.parameters()))


def compute():
    torch.manual_seed(0)
    lr = .1
    eps = 1e-3
    model = nn.Linear(4, 2)
    xs = [torch.rand(10, 4) for _ in range(2)]

    def closure():
        cmodel = copy.deepcopy(model)
        opt = optim.SGD(cmodel.parameters(), lr=lr)
        for x in xs[:-1]:
            opt.zero_grad()
            cmodel(x).pow(2).sum().backward()
            opt.step()
        loss = cmodel(xs[-1]).pow(2).sum()
        return loss

    fd_grads = finite_difference(model, closure, eps)
    grads = unrolled_grads(model, xs, lr)
    return {
        "fd.weight": fd_grads[0].detach(),
        "fd.bias": fd_grads[1].detach(),
        "unrolled.weight": grads[0],
        "unrolled.bias": grads[1],
    }


if __name__ == "__main__":
    compute()
