"""lerobot 0.6.1 (datasets/depth_utils.py:228, :229 twice, :236, `dequantize_depth`'s torch path;
policies/tdmpc/modeling_tdmpc.py:651, `TDMPCTOLD.pi`): the proven findings of `inplacefix check` on main
f57423a (stop 52, fresh52b). The wheel needs Python 3.12 (`pip download --python-version 3.12`); nothing is
imported from it: each function is compiled alone from the shipped file (ast, line numbers kept).

dequantize_depth: `buf = quantized.to(torch.float32, copy=True)`, then with `use_log` (the default)
`buf.exp_().sub_(shift_m)` (line 227): exp_ saves its result, buf; lines 228 (`clamp_`), 229 (`unsqueeze_(-1)` or
`unsqueeze_(-3)`, an in-place view op that bumps the version counter) and 236 (`mul_`, output in mm) change it.
The `.sub_` on line 227 itself already changes exp_'s result (a miss: not reported), so each finding is run
with line 227 as `buf.exp_()` and the other flagged lines skipped (path), and the control skips the flagged
line too. `av` and lerobot.configs.video's constants are stand-ins (their values as shipped). Codes requiring
grad (a float tensor; the function accepts "any integer or float dtype") raise: real by this file's convention;
lerobot decodes uint16 video frames, without grad (context).

TDMPCTOLD.pi: `action = torch.tanh(self._pi(z))`, then with `std > 0` `action += torch.randn_like(action) * std`
writes tanh's saved output. TD-MPC calls `pi(z, min_std)` in `plan` and for the TD target, both under
`torch.no_grad()`, and `pi(z)` (std 0) with grad: real by this file's convention (a latent or parameters
requiring grad with std > 0)."""

import _shim  # noqa: F401
import linecache
import math
import types

import numpy as np
import torch
import torch.nn as nn
from _check import attempt
from _fresh52b import compile_alone, src

DEPTH = src("lerobot/datasets/depth_utils.py")
TDMPC = src("lerobot/policies/tdmpc/modeling_tdmpc.py")
assert linecache.getline(DEPTH, 227).strip() == "buf.exp_().sub_(shift_m)"
assert linecache.getline(DEPTH, 228).strip() == "buf.clamp_(depth_min_m, depth_max_m)"
assert linecache.getline(DEPTH, 229).strip() == "buf.unsqueeze_(-1) if output_channel_last else buf.unsqueeze_(-3)"
assert linecache.getline(DEPTH, 236).strip() == "buf.mul_(MM_PER_METRE).round_().clamp_(0.0, _UINT16_MAX)"
assert linecache.getline(TDMPC, 651).strip() == "action += torch.randn_like(action) * std"

CONSTS = dict(DEFAULT_DEPTH_MIN=0.01, DEFAULT_DEPTH_MAX=10.0, DEFAULT_DEPTH_SHIFT=3.5, DEFAULT_DEPTH_USE_LOG=True,
              DEFAULT_DEPTH_PIX_FMT="gray12le", DEPTH_METER_UNIT="m", DEPTH_MILLIMETER_UNIT="mm",
              DEPTH_QMAX=4095, MM_PER_METRE=1000.0, _UINT16_MAX=65535)
SKIP = {228: "pass", 229: "pass", 236: "pass"}


def dequant(replace, grad=True, unit="m", channel_last=False):
    def go():
        ns = {"torch": torch, "np": np, "math": math, "av": types.SimpleNamespace(VideoFrame=type("VF", (), {})),
              **CONSTS}
        compile_alone(DEPTH, {"dequantize_depth", "_validate_log_quant_params"}, ns, replace=replace)
        codes = torch.tensor([[[100.0, 2000.0], [3000.0, 4000.0]]], requires_grad=grad)  # (1, H, W)
        out = ns["dequantize_depth"](codes, output_unit=unit, output_channel_last=channel_last)
        if grad:
            out.sum().backward()
    return go


def only(line, extra=None):
    rep = {**SKIP, 227: "buf.exp_()"}
    rep.pop(line)
    rep.update(extra or {})
    return rep


D = "lerobot/datasets/depth_utils.py"
attempt(f"{D}:228:IPF103", "path", "codes requiring grad, output in metres, :227 as `buf.exp_()`, :229 skipped",
        dequant(only(228)))
attempt(f"{D}:228:IPF103", "control", "as path, :228 out of place",
        dequant(only(228, {228: "buf = buf.clamp(depth_min_m, depth_max_m)"})))
U = "buf = buf.unsqueeze(-1) if output_channel_last else buf.unsqueeze(-3)"
attempt(f"{D}:229:IPF103", "path", "codes requiring grad, output_channel_last=True (`unsqueeze_(-1)`), :227 as "
        "`buf.exp_()`, :228 skipped", dequant(only(229), channel_last=True))
attempt(f"{D}:229:IPF103", "control", "as path, :229 out of place", dequant(only(229, {229: U}), channel_last=True))
attempt(f"{D}:229:IPF103@56", "path", "codes requiring grad, output_channel_last=False (`unsqueeze_(-3)`), :227 "
        "as `buf.exp_()`, :228 skipped", dequant(only(229)))
attempt(f"{D}:229:IPF103@56", "control", "as path, :229 out of place", dequant(only(229, {229: U})))
attempt(f"{D}:236:IPF103", "path", "codes requiring grad, output in mm (the default), :227 as `buf.exp_()`, "
        ":228/:229 skipped", dequant(only(236), unit="mm"))
attempt(f"{D}:236:IPF103", "control", "as path, :236 out of place",
        dequant(only(236, {236: "buf = buf.mul(MM_PER_METRE).round().clamp(0.0, _UINT16_MAX)"}), unit="mm"))
attempt(f"{D}:228:IPF103", "context", "codes without grad (decoded video frames), as shipped: runs",
        lambda: dequant({}, grad=False)())


def pi(replace, std, grad=True):
    def go():
        ns = compile_alone(TDMPC, {"TDMPCTOLD.pi"}, {"torch": torch, "Tensor": torch.Tensor}, replace=replace)
        torch.manual_seed(0)
        self = types.SimpleNamespace(_pi=nn.Linear(4, 2))
        z = torch.randn(3, 4, requires_grad=grad)
        ns["pi"](self, z, std).sum().backward()
    return go


T = "lerobot/policies/tdmpc/modeling_tdmpc.py:651:IPF101"
attempt(T, "path", "pi(z, std=0.05) on a latent requiring grad, backward", pi({}, 0.05))
attempt(T, "control", "line 651 as `action = action + ...`",
        pi({651: "action = action + torch.randn_like(action) * std"}, 0.05))
attempt(T, "context", "pi(z) with std 0 (the policy loss's call), parameters requiring grad: runs", pi({}, 0.0, False))
