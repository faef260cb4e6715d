"""gptqmodel 7.7.0 (sdist; exllamav3/modules/quant/exl3_lib/quantize.py:922, :931, :949, `regularize`;
hf_minimax_m2/modeling_minimax_m2.py:192, `MiniMaxM2SparseMoeBlock.forward`): the proven findings of
`inplacefix check` on main f57423a (stop 52, fresh52b). Everything is compiled alone from the shipped files (the
package imports its CUDA extensions and transformers).

regularize: `block_rms` returns `mean_sq.sqrt()` (sqrt saves its output). `out_channel_scales /= mean` (:922) and
`out_channel_scales[zero_out_scales] = 0.1` (:931) write the output-channel RMS; `in_channel_scales[... < 1e-30] =
0.1` (:949) the input-channel one. `get_hadamard_dt` is a stand-in (a scaled Sylvester Hadamard matrix, as
`get_hadamard` builds for powers of two); skip_g_scale=True (g_scale_gss needs the CUDA extension). regularize
also writes tensors that earlier in-place divisions saved (`weight /= sv` then `sv[...] = 0.0` and the Hadamard
writes into `weight`; `weight /= su` then `su /= g_scale`): not reported (misses), so every scenario runs those
four lines out of place. :922 is run with :931 and :949 out of place, :931 with :922 skipped and :949 out
of place, :949 with :922/:931 out of place. A weight requiring grad (a
non-leaf; EXL3 quantizes a detached copy under inference: context) raises when the returned weight is
backpropagated: real by this file's convention.

MiniMaxM2SparseMoeBlock.forward: `scores = torch.sigmoid(router_logits)` (sigmoid saves its output), then
`scores.add_(correction_bias)` (:192) when the block has a routing bias (`use_routing_bias`, MiniMax-M2's config).
The router is an nn.Linear whose weight requires grad, so any forward with grad on raises at backward (training
or fine-tuning the model; gptqmodel itself runs it for calibration under no_grad): real. ACT2FN is a stand-in
({"silu": nn.SiLU()}), the config a namespace."""

import _shim  # noqa: F401
import linecache
import math
import types

import torch
import torch.nn as nn
import torch.nn.functional as F
from _check import attempt
from _fresh52b import compile_alone, src

Q = src("gptqmodel/exllamav3/modules/quant/exl3_lib/quantize.py")
M = src("gptqmodel/hf_minimax_m2/modeling_minimax_m2.py")
assert linecache.getline(Q, 922).strip() == "out_channel_scales /= mean"
assert linecache.getline(Q, 931).strip() == "out_channel_scales[zero_out_scales] = 0.1"
assert linecache.getline(Q, 949).strip() == "in_channel_scales[in_channel_scales.abs() < 1e-30] = 0.1"
assert linecache.getline(M, 192).strip() == "scores.add_(correction_bias)"

MISSES = {939: "weight = weight / sv", 942: "sv = sv.masked_fill(zero_out_scales, 0.0)",
          951: "weight = weight / su", 960: "su = su / g_scale"}
OUT922 = "out_channel_scales = out_channel_scales / mean"
OUT931 = "out_channel_scales = out_channel_scales.masked_fill(zero_out_scales, 0.1)"
OUT949 = "in_channel_scales = in_channel_scales.masked_fill(in_channel_scales.abs() < 1e-30, 0.1)"


def hadamard_dt(n, device, dtype, scale=1.0):
    h = torch.ones(1, 1)
    while h.shape[0] < n:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return (h * scale).to(device=device, dtype=dtype)


def regularize(replace, grad=True):
    def go():
        ns = compile_alone(Q, {"regularize", "block_rms", "blockwise_preapply_had_r_", "blockwise_preapply_had_l_"},
                           {"torch": torch, "math": math, "get_hadamard_dt": hadamard_dt, "had_k": 128, "had_n": 128,
                            "codebook_scale": 1.24371088}, replace={**MISSES, **replace})
        torch.manual_seed(0)
        w0 = torch.randn(128, 128, requires_grad=grad)
        weight = w0 * 1.0
        su = torch.sign(torch.randn(128, 1))
        sv = torch.sign(torch.randn(1, 128))
        qa = {"apply_out_scales": True}
        _, w, _, su2, sv2 = ns["regularize"](weight, su, sv, qa, False, None, None, skip_g_scale=True)
        if grad:
            (w.sum() + su2.sum() + sv2.sum()).backward()
    return go


P = "gptqmodel/exllamav3/modules/quant/exl3_lib/quantize.py"
attempt(f"{P}:922:IPF101", "path", "regularize(weight requiring grad, out scales on), :931 out of place, backward "
        "from the returned weight, su, sv (:949 out of place)", regularize({931: OUT931, 949: OUT949}))
attempt(f"{P}:922:IPF101", "control", ":922 and :931 out of place", regularize({922: OUT922, 931: OUT931, 949: OUT949}))
attempt(f"{P}:931:IPF104", "path", "as :922's path, :922 skipped, :931 as shipped", regularize({922: "pass", 949: OUT949}))
attempt(f"{P}:931:IPF104", "control", ":922 skipped, :931 out of place", regularize({922: "pass", 931: OUT931, 949: OUT949}))
attempt(f"{P}:949:IPF104", "path", "regularize(weight requiring grad), :922/:931 out of place, :949 as shipped",
        regularize({922: OUT922, 931: OUT931}))
attempt(f"{P}:949:IPF104", "control", "as path, :949 out of place", regularize({922: OUT922, 931: OUT931, 949: OUT949}))
attempt(f"{P}:922:IPF101", "context", "a weight without grad (EXL3's detached copy), as shipped apart from the four "
        "missed lines: runs", regularize({}, grad=False))


def moe(replace, bias=True, grad=True):
    def go():
        ns = compile_alone(M, {"MiniMaxM2SparseMoeBlock", "MiniMaxM2MLP"},
                           {"torch": torch, "nn": nn, "F": F, "Tuple": tuple, "ACT2FN": {"silu": nn.SiLU()}},
                           replace=replace)
        cfg = types.SimpleNamespace(hidden_size=8, intermediate_size=16, hidden_act="silu", num_local_experts=4,
                                    num_experts_per_tok=2, router_jitter_noise=0.0, use_routing_bias=bias,
                                    scoring_func="sigmoid", use_grouped_topk=False, num_expert_group=None,
                                    topk_group=None, routed_scaling_factor=1.0)
        torch.manual_seed(0)
        block = ns["MiniMaxM2SparseMoeBlock"](cfg)
        with torch.set_grad_enabled(grad):
            out, logits = block(torch.randn(2, 3, 8))
        if grad:
            out.pow(2).sum().backward()
    return go


T = "gptqmodel/hf_minimax_m2/modeling_minimax_m2.py:192:IPF103"
attempt(T, "path", "the MoE block with a routing bias (MiniMax-M2), trained: forward with grad on, backward", moe({}))
attempt(T, "control", "line 192 as `scores = scores + correction_bias`",
        moe({192: "scores = scores + correction_bias"}))
attempt(T, "context", "the same block under no_grad (gptqmodel's calibration forward): runs", moe({}, grad=False))
