"""unsloth 2026.10.9 (wheel: packages `unsloth`, `studio`): the proven findings of `inplacefix check` (stop 53,
fresh53b, end of stop). Sources from $FRESH53_SITE (here /work/tmp/s53/fresh53b-pk/site-all: both batches) through `_fresh53.py`;
nothing of unsloth is imported: each flagged function is compiled alone from the shipped file (ast, line numbers
kept), except dpo.py's loss loop, whose shipped statements (lines 788-889) run as the body of a stand-in function.

- models/cohere.py:78 `fast_layernorm_inference` and models/llama.py:995, :1000, :1002 `fast_rms_layernorm_inference`:
  `XX.square()` saves XX, then `XX *=` (and, when X is float32 so that `X.to(torch.float32)` is X itself,
  `X.copy_(XX)` and `X *= self.weight`) write it. unsloth calls them at generation time (no grad); real by this
  file's convention (a hidden state that requires grad).
- models/dpo.py:887 `unsloth_fused_dpo_compute_loss_v1`: with loss_type "hinge" and use_weighting,
  `per_sequence_loss = torch.relu(...)` then `per_sequence_loss *= chosen_weights * rejected_weights` writes
  relu's saved output: raises in training (own use).
- studio/.../diffusion_convrot.py:172 `quantize_convrot_int8_weight`: `rotated.div_(scale)` writes what `abs` saved.
  Real by convention (a weight that requires grad; the studio quantizes loaded weights).
- studio/.../diffusion_rocm_compile.py:200 `_probe`: `param.copy_(value)` runs inside `with torch.no_grad():`,
  where `torch` is `_probe`'s parameter (the caller hands the torch module): false in every use.
- studio/.../laya_runtime.py:2014 `_feed_forward`: `x.add_(...)` writes what layer_norm saved. Real by convention.
"""

import _shim  # noqa: F401
import linecache
import textwrap
import types

import torch
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src, then

COHERE, LLAMA, DPO = src("unsloth/models/cohere.py"), src("unsloth/models/llama.py"), src("unsloth/models/dpo.py")
CONVROT = src("studio/backend/core/inference/diffusion_convrot.py")
ROCM = src("studio/backend/core/inference/diffusion_rocm_compile.py")
LAYA = src("studio/backend/core/systemone/laya_runtime.py")
for path, line, text in ((COHERE, 78, "XX *= variance.rsqrt_()"), (LLAMA, 995, "XX *= variance.rsqrt_()"),
                         (LLAMA, 1000, "X.copy_(XX)"), (LLAMA, 1002, "X *= self.weight"),
                         (DPO, 887, "per_sequence_loss *= chosen_weights * rejected_weights"),
                         (CONVROT, 172, "codes = rotated.div_(scale).round_().clamp_(-128.0, 127.0).to(torch.int8)"),
                         (ROCM, 200, "param.copy_(value)"),
                         (LAYA, 2014, "return x.add_(F.linear(y, layer.linear2.weight, layer.linear2.bias))")):
    assert linecache.getline(path, line).strip() == text, (path, line)


def hidden():
    return torch.randn(2, 3, 8, requires_grad=True) * 1.0  # a hidden state that requires grad (not a leaf)


def ln_self():
    return types.SimpleNamespace(variance_epsilon=1e-6, weight=torch.nn.Parameter(torch.randn(8)))


def cohere(replace):
    ns = compile_alone(COHERE, {"fast_layernorm_inference"}, {"torch": torch}, replace=replace)
    return lambda: ns["fast_layernorm_inference"](ln_self(), hidden(), torch.empty(8)).sum().backward()


F1 = "unsloth/models/cohere.py:78:IPF101"
attempt(F1, "path", "fast_layernorm_inference as shipped up to :78 (return XX), hidden state requiring grad: raises",
        cohere({78: then("XX *= variance.rsqrt_()", "return XX")}))
attempt(F1, "control", "the same with :78 out of place (`XX = XX * variance.rsqrt_()`): runs",
        cohere({78: then("XX = XX * variance.rsqrt_()", "return XX")}))
attempt(F1, "context", "as shipped to the end (out_weight a scratch buffer): raises",
        cohere({}))


def rms(replace, dtype=torch.float32):
    ns = compile_alone(LLAMA, {"fast_rms_layernorm_inference"},
                       {"torch": torch, "torch_square": torch.square, "torch_mean": torch.mean}, replace=replace)
    return lambda: ns["fast_rms_layernorm_inference"](ln_self(), hidden().to(dtype)).float().sum().backward()


OUT995, OUT1000, OUT1002 = "XX = XX * variance.rsqrt_()", "X.data.copy_(XX)", "X = X * self.weight"
F2, F3, F4 = ("unsloth/models/llama.py:995:IPF101", "unsloth/models/llama.py:1000:IPF103",
              "unsloth/models/llama.py:1002:IPF101")
attempt(F2, "path", "fast_rms_layernorm_inference up to :995 (return XX), float32 hidden state requiring grad: raises",
        rms({995: then("XX *= variance.rsqrt_()", "return XX")}))
attempt(F2, "control", "the same with :995 out of place: runs", rms({995: then(OUT995, "return XX")}))
attempt(F3, "path", ":995 out of place, :1000 as shipped (X is XX's source: X.to(float32) is X), :1002 out of place: "
        "raises", rms({995: OUT995, 1002: OUT1002}))
attempt(F3, "control", "the same with :1000 through .data (values kept, no version bump): runs",
        rms({995: OUT995, 1000: OUT1000, 1002: OUT1002}))
RET = "return X + XX"  # :1003 `return X` also hands back XX, so that backward reaches square (X's copy_ is skipped)
attempt(F4, "path", ":995 out of place, :1000 through .data, :1002 as shipped (X is the tensor square saved), "
        "returning X + XX: raises", rms({995: OUT995, 1000: OUT1000, 1003: RET}))
attempt(F4, "control", "the same with :1002 out of place: runs",
        rms({995: OUT995, 1000: OUT1000, 1002: OUT1002, 1003: RET}))
attempt(F4, "context", "as shipped, bfloat16 hidden state (XX a copy): :995 still raises",
        rms({}, torch.bfloat16))

# dpo.py: the shipped loss loop (788-889) as a function body; stand-ins for what comes before it.
lines = [linecache.getline(DPO, n) for n in range(788, 890)]
assert lines[0].strip() == "loss = 0.0" and lines[-1].strip() == "loss += per_sequence_loss.mean() * loss_weight"


def dpo(control=False):
    body = "".join(lines)
    if control:
        body = body.replace("per_sequence_loss *= chosen_weights * rejected_weights",
                            "per_sequence_loss = per_sequence_loss * (chosen_weights * rejected_weights)")
        assert "per_sequence_loss *=" not in body
    code = "def loss_loop(self, torch, F, math, delta_score, chosen_scores, rejected_scores, use_weighting, " \
           "shift_completion_mask, per_token_logps, log_sum_sq_probs, completion_mask, score_mask, device):\n" + \
           textwrap.indent(textwrap.dedent(body), "    ") + "    return loss\n"
    ns = {}
    exec(compile("\n" * 0 + code, DPO + ":loop", "exec"), ns)

    def go():
        import math
        logits = torch.randn(4, 5, requires_grad=True)  # per-token log-probs of the policy (the model's output)
        per_token_logps = logits.log_softmax(-1)
        logps = per_token_logps.sum(1)
        chosen, rejected = logps.chunk(2)
        delta = (chosen - 0.1) - (rejected - 0.2)
        me = types.SimpleNamespace(loss_types=["hinge"], loss_weights=[1.0], beta=0.1)
        mask = torch.ones(4, 6)
        loss = ns["loss_loop"](me, torch, F, math, delta, chosen, rejected, True, mask[..., 1:], per_token_logps,
                               torch.zeros(4, 1), mask, mask[..., 1:].bool(), "cpu")
        loss.backward()
    return go


F5 = "unsloth/models/dpo.py:887:IPF101"
attempt(F5, "path", "the shipped loss loop, loss_type hinge, use_weighting on, policy log-probs requiring grad: raises",
        dpo())
attempt(F5, "control", "the same with :887 out of place: runs", dpo(control=True))


def convrot(control=False):
    replace = {172: "codes = rotated.div(scale).round().clamp(-128.0, 127.0).to(torch.int8)"} if control else {}
    ns = compile_alone(CONVROT, {"quantize_convrot_int8_weight"}, {}, replace=replace)
    ns["build_convrot_hadamard"] = lambda size, device, dtype: torch.eye(size, dtype=dtype)  # stand-in rotation

    def go():
        w = torch.nn.Parameter(torch.randn(4, 16))
        codes, scale = ns["quantize_convrot_int8_weight"](w, 8)
        scale.sum().backward()
    return go


F6 = "studio/backend/core/inference/diffusion_convrot.py:172:IPF103"
attempt(F6, "path", "quantize_convrot_int8_weight on a weight requiring grad, backward from scale: raises", convrot())
attempt(F6, "control", "the same with :172 out of place: runs", convrot(control=True))


def rocm(torch_arg):
    ns = compile_alone(ROCM, {"_probe"}, {"time": __import__("time"), "Any": object},
                       replace={201: "return block"})  # stop right after the flagged loop, hand back the block

    def go():
        got = ns["_probe"](torch_arg, 0, torch.device("cpu"))
        if not isinstance(got, torch.nn.Module):  # _probe's own except turned an error into (False, why)
            raise RuntimeError(got[1])
        x = torch.randn(1, 4, 128, requires_grad=True)
        got(x, torch.zeros(())).float().sum().backward()
        assert all(p.grad is not None for p in got.qkv.parameters())
    return go


class NoNoGrad(types.ModuleType):  # the torch module, with no_grad a no-op: what the check assumed
    def __getattr__(self, name):
        return getattr(torch, name)


open_torch = NoNoGrad("torch")
open_torch.no_grad = __import__("contextlib").nullcontext
F7 = "studio/backend/core/inference/diffusion_rocm_compile.py:200:IPF105"
attempt(F7, "path", "_probe as its caller runs it (`_probe(torch, index)`, the torch module), up to the block's "
        "fill, then a forward and backward through the block: runs (the copy_ is under torch.no_grad())", rocm(torch))
attempt(F7, "context", "the same with `torch.no_grad` a no-op (the loop outside no_grad): raises (leaf)",
        rocm(open_torch))


def laya(control=False):
    replace = {2014: "return x + F.linear(y, layer.linear2.weight, layer.linear2.bias)"} if control else {}
    ns = compile_alone(LAYA, {"_feed_forward"}, {}, replace=replace)

    def go():
        layer = types.SimpleNamespace(norm2=torch.nn.LayerNorm(8), linear1=torch.nn.Linear(8, 16),
                                      linear2=torch.nn.Linear(16, 8))
        ns["_feed_forward"](layer, hidden()).sum().backward()
    return go


F8 = "studio/backend/core/systemone/laya_runtime.py:2014:IPF103"
attempt(F8, "path", "_feed_forward with a hidden state requiring grad (stand-in layer: LayerNorm, two Linear): raises",
        laya())
attempt(F8, "control", "the same with :2014 out of place: runs", laya(control=True))
