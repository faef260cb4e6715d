"""Stop 50 (prec50b): the six groups of the false proven findings on never-measured code, as programs of my
own (not the libraries' code). `inplacefix check --no-cache` on main e0a91e4 proves the lines marked PROVEN;
run this file (torch 2.13) and every function runs forward and backward with inputs requiring grad without an
in-place error (the controls marked RAISES show the same shape of code that does raise). Data for the lead,
not a test: nothing under codemod/ changed at prec50b.
"""

import tempfile

import torch
import torch.distributed as dist
from torch import nn


# arm-rebinding (ptlflow cost_agg.py:193/:177): on an `if` arm that binds the name twice, the first binding is
# read as reaching the code after the `if`; the second (`x = x @ w`) is the one that does. Also proven on 603dec8
# (before prec50's other_arm change). A straight line binding twice is not proven (`straight`).
def arm_rebound(x, w, refine: bool):
    if refine:
        x = torch.sigmoid(x)
        x = x @ w
    else:
        x = x * 2
    x += 1  # PROVEN IPF101 ("x is the output of torch.sigmoid at" the arm's first line)
    return x


def arm_rebound_no_else(x, w, refine: bool):
    if refine:
        h = torch.sigmoid(x)
        h = h @ w
    h.add_(1)  # PROVEN IPF103 (when refine is false, h is unbound: the function needs refine)
    return h


def straight(x, w):
    x = torch.sigmoid(x)
    x = x @ w
    x += 1  # not proven (correct)
    return x


def arm_not_rebound(x, w, refine: bool):
    if refine:
        x = torch.sigmoid(x)
    else:
        x = x * 2
    x += 1  # RAISES when refine (correctly proven)
    return x @ w


# written-output-dead-after-helper-read (point_transformer_pytorch point_transformer_pytorch.py:83,
# multihead_point_transformer_pytorch.py:105): norm's saved output is written, but the written tensor's only use is
# `topk`, whose values are never read; its indices are integral, so norm's backward never runs. The same code
# without the helper call is not proven (`KnnInline`): handing the tensor to a helper that reads only its dtype
# (`max_value(t)`, `torch.finfo(t.dtype).max`) before the write makes the check prove it.
def max_value(t):
    return torch.finfo(t.dtype).max


class Knn(nn.Module):
    def forward(self, pos, mask, k: int = 3):
        rel_dist = (pos[:, :, None, :] - pos[:, None, :, :]).norm(dim=-1)
        mask_value = max_value(rel_dist)
        rel_dist.masked_fill_(~mask, mask_value)  # PROVEN IPF103 ("rel_dist is the output of norm")
        _, idx = rel_dist.topk(k, largest=False)
        return idx


class KnnInline(nn.Module):
    def forward(self, pos, mask, k: int = 3):
        rel_dist = (pos[:, :, None, :] - pos[:, None, :, :]).norm(dim=-1)
        rel_dist.masked_fill_(~mask, torch.finfo(rel_dist.dtype).max)  # not proven (correct)
        _, idx = rel_dist.topk(k, largest=False)
        return idx


class KnnValues(nn.Module):
    def forward(self, pos, mask, k: int = 3):
        rel_dist = (pos[:, :, None, :] - pos[:, None, :, :]).norm(dim=-1)
        mask_value = max_value(rel_dist)
        rel_dist.masked_fill_(~mask, mask_value)  # RAISES: topk's values reach the loss (correctly proven)
        dist, _ = rel_dist.topk(k, largest=False)
        return dist


# parameter-annotation (torchrec tensor_pool.py:267): a parameter annotated `torch.nn.Parameter` is read as a
# parameter with grad on; the one caller passes a Parameter built with requires_grad=False.
def put(shard: torch.nn.Parameter, ids: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    shard[ids] = values  # PROVEN IPF105 ("an nn.Parameter with grad on")
    return torch.empty(0)


class Pool(nn.Module):
    def __init__(self, shard: torch.Tensor) -> None:
        super().__init__()
        self._shard: torch.nn.Parameter = torch.nn.Parameter(shard, requires_grad=False)

    def update(self, ids, values):
        _ = put(self._shard, ids, values)


# integral-frozen-parameter and collective-as-save (torchrec hash_mc_modules.py:1101): an int64 Parameter built
# with requires_grad=False (it cannot require grad at all) is proven a leaf with grad on, and
# `torch.distributed.gather` (a collective, no autograd node) is read as saving its argument.
class Ids(nn.Module):
    def __init__(self):
        super().__init__()
        self.ids = torch.nn.Parameter(torch.full((8, 1), -1, dtype=torch.int64), requires_grad=False)

    def sync(self, gathered):
        table = self.ids
        dist.gather(table, gather_list=gathered, dst=0)
        table.copy_(gathered[0])  # PROVEN IPF103 ("saved for backward by torch.distributed.gather") and IPF105
        return table


# same-flag-exclusive (sample_factory running_mean_std.py:102/:107): the save runs only when `not denormalize`,
# the write on the `denormalize` arm: the same flag excludes them (the other arm's write does raise).
class Norm(nn.Module):
    def forward(self, x, denormalize: bool = False):
        if self.training and not denormalize:
            self.v = x.var(0)
        if denormalize:
            x.mul_(2.0)  # PROVEN IPF103 ("saved for backward by var")
        else:
            x.mul_(0.5)  # RAISES in training (correctly proven)


if __name__ == "__main__":
    w = torch.randn(4, 4, requires_grad=True)
    for refine in (True, False):
        arm_rebound(torch.randn(3, 4, requires_grad=True), w, refine).sum().backward()
    arm_rebound_no_else(torch.randn(3, 4, requires_grad=True), w, True).sum().backward()
    straight(torch.randn(3, 4, requires_grad=True), w).sum().backward()
    try:
        arm_not_rebound(torch.randn(3, 4, requires_grad=True), w, True).sum().backward()
        raise SystemExit("the arm_not_rebound control did not raise")
    except RuntimeError as exc:
        assert "modified by an inplace operation" in str(exc)
    pos = torch.randn(2, 6, 3, requires_grad=True)
    mask = torch.rand(2, 6, 6) > 0.2
    idx = Knn()(pos, mask)
    (pos[:, idx[0, 0, 0]] ** 2).sum().backward()  # the gathered points reach the loss; norm's backward does not run
    assert pos.grad is not None
    try:
        KnnValues()(pos, mask).sum().backward()
        raise SystemExit("the KnnValues control did not raise")
    except RuntimeError as exc:
        assert "modified by an inplace operation" in str(exc)
    pool = Pool(torch.randn(6, 3))
    vals = torch.randn(2, 3, requires_grad=True)
    pool.update(torch.tensor([1, 4]), vals * 2)
    pool._shard.sum().backward()
    assert vals.grad is not None
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0, world_size=1)
        Ids().sync([torch.zeros(8, 1, dtype=torch.int64)])
        dist.destroy_process_group()
    norm = Norm().train()
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(5, 4) * w
    norm(x, True)  # the denormalize arm: nothing saved x
    x.sum().backward()
    x = torch.randn(5, 4) * w
    norm(x, False)
    try:
        (x.sum() + norm.v.sum()).backward()
        raise SystemExit("the not-denormalize arm did not raise")
    except RuntimeError as exc:
        assert "modified by an inplace operation" in str(exc)
    print("all ran; the four controls raised")
