"""Stop 53 (fresh53): one small program per false group of the proven tier found on the code bases first measured
by fresh53. Main 7911fb7 proves each `probe` (`inplacefix check prec53_probes.py`), and each probe runs backward
fine or has nothing to differentiate (`python prec53_probes.py`); each has a control, the same code with what makes
it safe taken away, that raises (and is proven, rightly)."""

import numpy as np
import torch
from torch import nn

from _prec53_nograd import embed, embed_with_grad


# no-grad-helper-unseen (bert-score score.py:254, :255, scorer.py:285, :286; mergekit moe/router.py:148): the
# tensor written comes from a helper that runs the model under torch.no_grad(). The same helper in the same module
# is followed (not proven); imported from a sibling module (bert-score's utils.get_bert_embedding) or reached
# through a nested def (mergekit's `_do_it` closures) it is not. Seen while bisecting, not in a code base: a
# same-module helper whose `return model(x)` is inside the `with torch.no_grad():` is not followed either.
def imported_probe(model, x):
    emb = embed(model, x)
    emb.div_(torch.norm(emb, dim=-1).unsqueeze(-1))
    return emb


def imported_control(model, x):
    emb = embed_with_grad(model, x)
    emb.div_(torch.norm(emb, dim=-1).unsqueeze(-1))
    return emb


def _local_embed(model, x):
    with torch.no_grad():
        out = model(x)
    return out


def closure_probe(model, x):
    def do_it(t):
        return _local_embed(model, t)

    emb = do_it(x)
    emb /= emb.norm(p=2, dim=-1, keepdim=True)
    return emb


def closure_control(model, x):
    def do_it(t):
        return model(t)

    emb = do_it(x)
    emb /= emb.norm(p=2, dim=-1, keepdim=True)
    return emb


def _return_inside(model, x):
    with torch.no_grad():
        return model(x)


def return_inside_probe(model, x):
    emb = _return_inside(model, x)
    emb.div_(torch.norm(emb, dim=-1).unsqueeze(-1))
    return emb


# advanced-index-copy (cellpose denoise.py:115): `xr[ii]` with `ii = torch.nonzero(...).flatten()` is an
# advanced-index copy; clip saves the copy, and the write into xr changes nothing saved. (With `xr = x * 1.0` and
# no earlier write into xr, the same line is not proven.)
def index_probe(ds: torch.Tensor, gblur: torch.Tensor):
    ii = torch.nonzero(ds > 1).flatten()
    xr = torch.rand(len(ds))
    xr[ii] = ds[ii].float() / gblur
    xr[ii] = torch.clip(xr[ii], 0.05, 1.5)
    return xr


def index_control(ds: torch.Tensor, gblur: torch.Tensor):
    xr = torch.rand(len(ds))
    xr[:2] = ds[:2].float() / gblur
    xr[:2] = torch.clip(xr[:2], 0.05, 1.5)
    return xr


# numpy-call-operand (cellseg-models-pytorch transforms/functional/omnipose.py:108): `m + np.sqrt(2)` is read as
# possibly requiring grad (a NumPy call's result, a float), which is the only grad evidence in a loop over a tensor
# made with torch.zeros. `m + 1.5` is not proven. (The shipped line also reads through an advanced-index copy.)
def numpy_probe(n: int):
    t = torch.zeros(5, dtype=torch.double)
    for _ in range(n):
        m = torch.minimum(t[1:4], t[0:3])
        a = m + np.sqrt(2)
        t[1:4] = torch.sqrt(a)
    return t


def numpy_control(n: int, shift: torch.Tensor):
    t = torch.zeros(5, dtype=torch.double)
    for _ in range(n):
        m = torch.minimum(t[1:4], t[0:3])
        a = m + shift
        t[1:4] = torch.sqrt(a)
    return t


# non-differentiable-sink (torch-pointcloud models/pointgpt.py:57, torchref model/disorder_field.py:808): the
# tensor written reaches only float() or argmin (after an index or a masked_fill), so no backward reaches the
# node that saved it. `dist.argmin(-1)` straight on it is not proven; `dist[0].argmin(-1)` and float() are.
def float_probe(center: torch.Tensor):
    dist = torch.cdist(center, center)
    dist.fill_diagonal_(float("inf"))
    spacing = float(dist.min(dim=1).values.median())
    return spacing


def argmin_probe(center: torch.Tensor):
    dist = torch.cdist(center, center)
    dist.fill_diagonal_(float("inf"))
    return dist[0].argmin(dim=-1)


def sink_control(center: torch.Tensor):
    dist = torch.cdist(center, center)
    dist.fill_diagonal_(float("inf"))
    return dist[0]


if __name__ == "__main__":
    call = globals()  # through globals(): call sites here must not tell the analysis what the probes get

    from _probe_run import raises, runs

    def backward_if_any(t):
        if t.requires_grad:
            t.sum().backward()
        else:
            assert t.grad_fn is None  # nothing to differentiate

    model, x = nn.Linear(3, 4), torch.randn(2, 3)
    print("no-grad-helper-unseen imported probe", runs(lambda: backward_if_any(call["imported_probe"](model, x))))
    print("no-grad-helper-unseen imported control", raises(lambda: call["imported_control"](model, x).sum().backward()))
    print("no-grad-helper-unseen closure probe", runs(lambda: backward_if_any(call["closure_probe"](model, x))))
    print("no-grad-helper-unseen closure control", raises(lambda: call["closure_control"](model, x).sum().backward()))
    print("no-grad-helper-unseen return-inside probe", runs(lambda: backward_if_any(call["return_inside_probe"](model, x))))
    gblur = torch.tensor(1.5, requires_grad=True)
    ds = torch.tensor([1, 3, 2, 1, 4])
    print("advanced-index-copy probe", runs(lambda: call["index_probe"](ds, gblur).sum().backward()))
    print("advanced-index-copy control (a basic slice: a view)", raises(lambda: call["index_control"](ds, gblur).sum().backward()))
    print("numpy-call-operand probe", runs(lambda: backward_if_any(call["numpy_probe"](3))))
    shift = torch.tensor(1.0, dtype=torch.double, requires_grad=True)
    print("numpy-call-operand control (a shift requiring grad)", raises(lambda: call["numpy_control"](3, shift).sum().backward()))
    center = torch.randn(4, 3, requires_grad=True)
    print("non-differentiable-sink float probe", runs(lambda: call["float_probe"](center)))
    print("non-differentiable-sink argmin probe", runs(lambda: call["argmin_probe"](center)))
    print("non-differentiable-sink control (the row returned)",
          raises(lambda: call["sink_control"](center)[torch.tensor([1, 2, 3])].sum().backward()))
