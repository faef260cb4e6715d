"""llmcompressor 0.14.0.1: the eleven proven findings of `inplacefix check` on main 97a004a (stop 52, fresh52).

- modeling/moe/linear_experts.py:71-73, 81-83 (`ExpertMLPWithGate.copy_from_experts_module`) and :156-157,
  164-165 (`ExpertMLPWithoutGate`): `self.gate_proj.weight.copy_(...)` (and the biases) on an `nn.Linear`'s
  parameters: with grad on PyTorch refuses ("a leaf Variable that requires grad is being used in an in-place
  operation"). Each line is run with the other flagged copies as `pass` (isolated); control: the line under
  `torch.no_grad()`. llmcompressor's own caller, `from_experts_module` (line 242, `@torch.no_grad()`), keeps
  grad off: real by this file's convention (the method raises when called with grad on), like optimi's.
- modeling/deepseekv32/model.py:634 (`Gate.forward`): `scores = scores.softmax(dim=-1)` (softmax saves its
  output), `original_scores = scores`; with no score-correction bias (`dim != 7168`) and `n_groups > 1`,
  `scores.view(...).masked_fill_(...)` writes softmax's output, and `original_scores.gather(1, indices)` is the
  routing weight: backward raises. With `dim == 7168` (DeepSeek-V3.2's own config) the bias is added first
  (a fresh tensor): the context runs.
The classes are compiled alone from the shipped files (llmcompressor imports transformers and
compressed_tensors); the experts are a stand-in with the fused weights as plain tensors."""

import _shim  # noqa: F401
import linecache
import math
import types
from abc import ABC, abstractmethod
from typing import Callable, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from _check import attempt
from _fresh52 import compile_alone, src

LE = src("llmcompressor/modeling/moe/linear_experts.py")
DS = src("llmcompressor/modeling/deepseekv32/model.py")
WITH = {71: "self.gate_proj.weight.copy_(gate_weight)", 72: "self.up_proj.weight.copy_(up_weight)",
        73: "self.down_proj.weight.copy_(down_weight)", 81: "self.gate_proj.bias.copy_(gate_bias)",
        82: "self.up_proj.bias.copy_(up_bias)", 83: "self.down_proj.bias.copy_(down_bias)"}
WITHOUT = {156: "self.up_proj.weight.copy_(up_weight)", 157: "self.down_proj.weight.copy_(down_weight)",
           164: "self.up_proj.bias.copy_(up_bias)", 165: "self.down_proj.bias.copy_(down_bias)"}
for n, text in {**WITH, **WITHOUT}.items():
    assert linecache.getline(LE, n).strip() == text, n
assert linecache.getline(DS, 618).strip() == "scores = scores.softmax(dim=-1)"
assert linecache.getline(DS, 634).strip() == 'scores = scores.masked_fill_(mask.unsqueeze(-1), float("-inf")).flatten(1)'

H, I, E = 4, 3, 2  # hidden, intermediate, experts


def experts(gated):
    if gated:
        return types.SimpleNamespace(is_transposed=False, has_bias=True, gate_up_proj=torch.randn(E, 2 * I, H),
                                     down_proj=torch.randn(E, H, I), gate_up_proj_bias=torch.randn(E, 2 * I),
                                     down_proj_bias=torch.randn(E, H))
    return types.SimpleNamespace(is_transposed=False, has_bias=True, up_proj=torch.randn(E, I, H),
                                 down_proj=torch.randn(E, H, I), up_proj_bias=torch.randn(E, I),
                                 down_proj_bias=torch.randn(E, H))


def copy_run(gated, keep, no_grad=False):
    """Only line `keep` of the flagged copies runs (the others `pass`); `no_grad`: it runs under no_grad."""
    lines = WITH if gated else WITHOUT
    replace = {n: "pass" for n in lines if n != keep}
    if no_grad:
        replace[keep] = "with torch.no_grad():\n    " + lines[keep]

    def go():
        ns = compile_alone(LE, {"ExpertMLP", "ExpertMLPWithGate", "ExpertMLPWithoutGate"},
                           {"torch": torch, "ABC": ABC, "abstractmethod": abstractmethod, "Callable": Callable},
                           replace=replace)
        if gated:
            m = ns["ExpertMLPWithGate"](H, I, True, lambda gu: F.silu(gu[..., :I]) * gu[..., I:], torch.float32)
        else:
            m = ns["ExpertMLPWithoutGate"](H, I, True, nn.SiLU(), torch.float32)
        m.copy_from_experts_module(experts(gated), 1)
        x = torch.randn(2, H)
        out = m(x) if gated else m.down_proj(m.act_fn(m.up_proj(x)))
        out.sum().backward()
    return go


for gated, lines in ((True, WITH), (False, WITHOUT)):
    cls = "ExpertMLPWithGate" if gated else "ExpertMLPWithoutGate"
    for n in lines:
        f = f"llmcompressor/modeling/moe/linear_experts.py:{n}:IPF105"
        attempt(f, "path", f"{cls}(bias=True).copy_from_experts_module(experts, 1) with grad on, only line {n} "
                "of the copies", copy_run(gated, n))
        attempt(f, "control", f"line {n} under torch.no_grad() (as from_experts_module calls it), then forward and "
                "backward", copy_run(gated, n, no_grad=True))


def gate_run(dim, replace, score_func="softmax"):
    def go():
        ns = compile_alone(DS, {"Gate"}, {"torch": torch, "nn": nn, "F": F, "Tuple": Tuple, "Optional": Optional,
                                          "math": math}, replace=replace, bases={"Gate": ["nn.Module"]})
        args = types.SimpleNamespace(dim=dim, n_activated_experts=2, n_expert_groups=4, n_limited_groups=2,
                                     score_func=score_func, route_scale=2.5, n_routed_experts=8)
        torch.manual_seed(0)
        gate = ns["Gate"](args)
        with torch.no_grad():
            gate.weight.normal_()
            if gate.e_score_correction_bias is not None:
                gate.e_score_correction_bias.zero_()
        weights, indices = gate(torch.randn(3, dim))
        weights.sum().backward()
    return go


F634 = "llmcompressor/modeling/deepseekv32/model.py:634:IPF103"
OUT634 = 'scores = scores.masked_fill(mask.unsqueeze(-1), float("-inf")).flatten(1)'
attempt(F634, "path", "Gate(dim=16, 8 experts in 4 groups, softmax) forward, backward of the routing weights",
        gate_run(16, {}))
attempt(F634, "control", "line 634 as masked_fill out of place", gate_run(16, {634: OUT634}))
attempt(F634, "context", "dim=7168 (the correction bias is added first, a fresh tensor): runs", gate_run(7168, {}))
attempt(F634, "context", "dim=16 with score_func='sigmoid' (sigmoid saves its output too): raises",
        gate_run(16, {}, "sigmoid"))
