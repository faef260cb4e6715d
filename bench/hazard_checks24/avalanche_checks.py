"""avalanche-lib 0.6.0: the two proven findings of `inplacefix check` on 2bba8c4 (stop 45), both
false and gone on branch prec45: LaMAML's `_before_training_exp` (training/supervised/lamaml.py:142,
lamaml_v2.py:149) grows the learning-rate parameters of a model whose parameters grew: in a loop,
`alpha_param = torch.ones(p.shape) * self.alpha_init`, then `alpha_param[idx] = old.detach().clone()`
(the flagged write), then `alpha_param = nn.Parameter(alpha_param, requires_grad=True)`. The write
was taken for one into the last turn's `nn.Parameter` (a leaf that requires grad), but every turn
binds `alpha_param` to a fresh product first. The path runs the method with grad on over a model
whose weight and bias grew (both writes run) and raises nothing. Run from the installed files'
source (`import avalanche` needs torchvision and more), with a stand-in `self` and the method's
`super()._before_training_exp(...)` call left out (a template hook; the line count kept)."""

import _shim  # noqa: F401

import importlib.util
import types

import torch
from _check import attempt, expect_line
from _rewrite import functions_from, rewritten
from torch import nn

ROOT = importlib.util.find_spec("avalanche").submodule_search_locations[0] + "/training/supervised/"


def grown(function):
    def run():
        torch.manual_seed(0)
        model = nn.Linear(3, 2)
        alpha = nn.ParameterDict({n.replace(".", "_"): nn.Parameter(torch.ones(p.shape) * 0.1)
                                  for n, p in model.named_parameters()})
        model.weight, model.bias = nn.Parameter(torch.randn(4, 3)), nn.Parameter(torch.randn(4))
        strategy = types.SimpleNamespace(alpha_params_initialized=True, model=model, alpha_params=alpha,
                                         alpha_init=0.1, device="cpu", lr_alpha=0.1)
        function(strategy)
        assert tuple(strategy.alpha_params["weight"].shape) == (4, 3)
    return run


for name, line, hook in (("lamaml.py", 142, "super()._before_training_exp(drop_last=True, **kwargs)"),
                         ("lamaml_v2.py", 149, "super()._before_training_exp(drop_last=True, **kwargs)")):
    method = functions_from(ROOT + name, ["LaMAML._before_training_exp"])["LaMAML._before_training_exp"]
    expect_line(method, line, "alpha_param[idx] = self.alpha_params[n].detach().clone()")
    method = rewritten(method, [(hook, "pass")])
    attempt(f"avalanche/training/supervised/{name}:{line}:IPF105", "path",
            "LaMAML._before_training_exp with grad on, the model's weight and bias grown (the write runs)", grown(method))
