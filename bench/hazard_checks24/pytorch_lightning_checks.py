"""pytorch-lightning 2.6.6: the one proven finding of `inplacefix check` (main at e95ccd4, stop 42):
`StochasticWeightAveraging.update_parameters`
(`pytorch_lightning/callbacks/stochastic_weight_avg.py`, line 332) writes `p_swa_.copy_(src)`
where `p_swa_ = p_swa.detach()` (line 329) and `p_swa` runs over `average_model.parameters()`. The
report says PyTorch raises the leaf error ("a view of `p_swa`, a parameter"); `detach()` returns a
tensor that requires no grad (it shares the storage, outside autograd), and PyTorch lets one write
into it with grad on.

The path runs `update_parameters` as the callback does (grad on, both models' parameters
requiring grad; the first call copies, the second averages), then backward through the averaged
model; the context writes through a real view of the parameter (`p_swa.view_as(p_swa)`, what the
report took `detach()` for), which PyTorch refuses."""

import _shim  # noqa: F401
import copy

import torch
from _check import attempt, expect_line
from _rewrite import rewritten
from pytorch_lightning.callbacks.stochastic_weight_avg import StochasticWeightAveraging as SWA

FINDING = "pytorch_lightning/callbacks/stochastic_weight_avg.py:332:IPF105"
expect_line(SWA.update_parameters, 329, "p_swa_ = p_swa.detach()")
expect_line(SWA.update_parameters, 332, "p_swa_.copy_(src)")


def averaged(edits=()):
    def run():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
        average = copy.deepcopy(model)
        n_averaged = torch.tensor(0, dtype=torch.long)
        update = rewritten(SWA.update_parameters, edits) if edits else SWA.update_parameters
        for _ in range(2):
            update(average, model, n_averaged, SWA.avg_fn)
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(0.1)
        assert int(n_averaged) == 2
        assert torch.allclose(average[0].weight, model[0].weight - 0.15)
        average(torch.randn(5, 3)).sum().backward()
    return run


attempt(FINDING, "path", "update_parameters twice (copy, then average) with grad on, parameters requiring grad, "
        "backward through the averaged model", averaged())
attempt(FINDING, "context", "the same with `p_swa_ = p_swa.view_as(p_swa)` (a view, what the report took detach for)",
        averaged([("p_swa_ = p_swa.detach()", "p_swa_ = p_swa.view_as(p_swa)")]))
