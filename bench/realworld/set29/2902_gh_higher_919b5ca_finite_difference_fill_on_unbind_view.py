# source: https://github.com/facebookresearch/higher/commit/919b5ca6c06cfc255dcd9a293214d1d844d74d5d
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# higher (differentiable inner loops for meta-learning), tests/test_optim.py: testGradientCorrectness checks the
# gradient through an unrolled optimizer against finite differences computed by the test helper
# `finite_difference(model, closure, eps)`, which walks `zip(param.flatten(), fd_param.flatten())` and writes each
# difference with `fdp.fill_((closure() - ground) / eps)`. Iterating a tensor unbinds it, so `fdp` is one of several
# views returned by one function, made while `fd_param` required no grad; the value written requires grad (the closure's
# loss comes from a deep copy of the model). PyTorch 1.7 made such a write an error; on torch 2.13 the fill raises "A
# view was created in no_grad mode and is being modified inplace with grad mode enabled. This view is the output of a
# function that returns multiple views. Such functions do not allow the output views to be modified inplace." Commit
# 919b5ca / PR #85 ("Fix unit test helper function for pytorch 1.7 compatibility") writes `fdp.data.fill_(...)`.
# The culprit is in the library's own test, so this program is that test, at small size. Stand-ins: the model is
# nn.Linear(4, 2) (one of the test's sweep), one inner SGD step (lr 0.1) instead of the sweep's optimizers, and the
# unrolled gradient that the test takes from higher.innerloop_ctx / diffopt.step is taken here with a plain
# create_graph SGD step through torch.func.functional_call.
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
            fdp.fill_((closure() - ground) / eps)
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
