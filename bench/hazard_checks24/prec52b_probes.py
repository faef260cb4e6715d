"""Stop 52 (fresh52b): one small program per false group of the proven tier found on the code bases first measured
by fresh52b. Main f57423a proves each `probe` (`inplacefix check prec52b_probes.py`), and each probe runs backward
fine (`python prec52b_probes.py`); each has a control, the same code with what makes it safe taken away, that raises."""

import torch
from torch import nn


# scatter-src-index-copy (doctr models/utils/pytorch.py:463): the src of an in-place scatter_reduce_ is
# `output[..., src]`, an advanced-index copy (the index is a tensor), read as a view of the scatter's own target.
# (`output[..., [0, 2]]` is not proven, nor a product saving the copy and a later write of `output`.)
def scatter_probe(logits: torch.Tensor, src: torch.Tensor, index: torch.Tensor):
    output = logits.clone()
    values = output[..., src]
    output.scatter_reduce_(-1, index, values, reduce="amax", include_self=True)
    return output


def scatter_control(logits: torch.Tensor, src: torch.Tensor, index: torch.Tensor):
    output = logits.clone()
    values = output[..., 2:4]
    output.scatter_reduce_(-1, index, values, reduce="amax", include_self=True)
    return output


# frozen-parameter-subclass (modelopt torch/quantization/qtensor/base_qtensor.py:189): the copy_ runs only for
# parameters that pass `isinstance(param, Frozen)`, a Parameter subclass whose __new__ passes requires_grad=False.
class Frozen(nn.Parameter):
    def __new__(cls, data):
        return super().__new__(cls, data, requires_grad=False)


class Thawed(nn.Parameter):
    def __new__(cls, data):
        return super().__new__(cls, data, requires_grad=True)


def load_probe(module, state):
    for name, param in module.named_parameters():
        if isinstance(param, Frozen):
            param.copy_(state[name])


def load_control(module, state):
    for name, param in module.named_parameters():
        if isinstance(param, Thawed):
            param.copy_(state[name])


# attribute-operand-unknown (quark torch/algorithm/gptaq/gptaq.py:227): the matmul saves the view `w` only if
# its other operand requires grad; that operand comes from the tensor attribute `self.H`, which quark accumulates
# from `.data` inputs into zeros. Still proven with `self.H = torch.zeros(4, 4)` in __init__ and no accumulation
# at all; not proven with `L = torch.eye(4)`. Not proven either with `W = self.layer.weight.data.clone()` alone:
# the `.float()` after it is needed, though W's grad is not what the finding rests on.
class Hessian:
    def __init__(self, layer):
        self.layer = layer

    def add_batch(self, inp):
        self.H += inp.t() @ inp

    def probe(self):
        W = self.layer.weight.data.clone()
        W = W.float()
        L = torch.linalg.cholesky(self.H)
        W1 = W[:, 0:4].clone()
        for i in range(4):
            w = W1[:, i]
            W1[:, i:] -= w.unsqueeze(1).matmul(L[i, i:4].unsqueeze(0))
        self.layer.weight.data = W1

    def control(self):
        W = self.layer.weight.data.clone()
        W = W.float()
        L = torch.linalg.cholesky(self.H)
        W1 = W[:, 0:4].clone()
        for i in range(4):
            w = W1[:, i]
            W1[:, i:] -= w.unsqueeze(1).matmul(L[i, i:4].unsqueeze(0))
        return W1


if __name__ == "__main__":
    from _probe_run import raises, runs

    logits = torch.randn(2, 5, requires_grad=True)
    src, index = torch.tensor([2, 4]), torch.tensor([[1, 3], [1, 3]])
    print("scatter-src-index-copy probe", runs(lambda: scatter_probe(logits, src, index).sum().backward()))
    print("scatter-src-index-copy control (a basic slice: a view)", raises(lambda: scatter_control(logits, src, index).sum().backward()))
    lin = nn.Linear(3, 2)
    lin.weight = Frozen(torch.zeros(2, 3))
    print("frozen-parameter-subclass probe", runs(lambda: (load_probe(lin, {"weight": torch.ones(2, 3), "bias": torch.ones(2)}),
                                                          lin(torch.randn(4, 3, requires_grad=True)).sum().backward())))
    lin.weight = Thawed(torch.zeros(2, 3))
    print("frozen-parameter-subclass control", raises(lambda: load_control(lin, {"weight": torch.ones(2, 3), "bias": torch.ones(2)})))
    hs = Hessian(nn.Linear(4, 3))
    hs.H = torch.eye(4)
    x = torch.randn(8, 4, requires_grad=True)
    hs.add_batch(x.data)
    print("attribute-operand-unknown probe", runs(lambda: (hs.probe(), hs.layer(x).sum().backward())))
    hs.H = hs.H + torch.zeros(4, 4, requires_grad=True)
    print("attribute-operand-unknown control (H requiring grad)", raises(lambda: hs.control().sum().backward()))
