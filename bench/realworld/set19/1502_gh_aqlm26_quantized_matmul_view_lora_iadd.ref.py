# source: https://github.com/Vahe1994/AQLM/pull/26
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# REFERENCE (commit a7d5627: the kernel returns a clone, in the fixed helper).
# AQLM (LLM weight quantization) with a PEFT LoRA adapter: PR #26 made AQLM's QuantizedLinear differentiable with an
# autograd Function `_QuantizedMatmul` whose forward returns the kernel's `flat_output.view(output_sizes)`, a view
# of a tensor made inside the Function. PEFT's `AqlmLoraLinear.forward` (peft/tuners/lora/aqlm.py, PR #1476) adds
# the adapter's output to it in place, `result += output`: "Output 0 of _QuantizedMatmulBackward is a view and is
# being modified inplace. This view was created inside a custom Function (or because an input was returned as-is)
# ... You can fix this by cloning the output of the custom Function." (quoted in the PR's review thread). Fix
# (commit a7d5627 "clone", in the PR): the kernel returns `flat_output.reshape(output_sizes).clone()`.
# The library module is 1502helpers_aqlm_inference.py (ref: 1502helpers_aqlm_inference_fixed.py).
# Stand-ins: the C++ kernels (see the helper's header); `LoraLayerStandIn` for peft's LoraLayer (update_layer
# with a Linear pair, dropout, scaling lora_alpha / r, one active adapter); a two-layer toy model and one
# training step of the adapter.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
aqlm_inference = importlib.import_module("1502helpers_aqlm_inference_fixed")
QuantizedLinear = aqlm_inference.QuantizedLinear


class LoraLayerStandIn:
    def __init__(self, base_layer):
        self.base_layer = base_layer
        self.lora_A = nn.ModuleDict()
        self.lora_B = nn.ModuleDict()
        self.lora_dropout = nn.ModuleDict()
        self.scaling = {}
        self.disable_adapters = False
        self.active_adapters = []

    def update_layer(self, adapter_name, r, lora_alpha, lora_dropout, init_lora_weights, use_rslora):
        self.lora_A[adapter_name] = nn.Linear(self.base_layer.in_features, r, bias=False)
        self.lora_B[adapter_name] = nn.Linear(r, self.base_layer.out_features, bias=False)
        self.lora_dropout[adapter_name] = nn.Dropout(lora_dropout) if lora_dropout > 0 else nn.Identity()
        self.scaling[adapter_name] = lora_alpha / r
        self.active_adapters = [adapter_name]


class AqlmLoraLinear(torch.nn.Module, LoraLayerStandIn):
    def __init__(self, base_layer, adapter_name, r=0, lora_alpha=1, lora_dropout=0.0, init_lora_weights=True,
                 use_rslora=False, **kwargs):
        super().__init__()
        LoraLayerStandIn.__init__(self, base_layer)

        self._active_adapter = adapter_name
        self.update_layer(adapter_name, r, lora_alpha, lora_dropout, init_lora_weights, use_rslora)

    def forward(self, x: torch.Tensor):
        # note: logic differs from default Linear because merging is not supported
        result = self.base_layer(x)

        if self.disable_adapters:
            return result

        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A.keys():
                continue
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            dropout = self.lora_dropout[active_adapter]
            scaling = self.scaling[active_adapter]

            requires_conversion = not torch.is_autocast_enabled()
            if requires_conversion:
                expected_dtype = result.dtype
                x = x.to(lora_A.weight.dtype)

            output = lora_B(lora_A(dropout(x)))
            if requires_conversion:
                output = output.to(expected_dtype)
            output = output * scaling
            result += output
        return result


def compute():
    torch.manual_seed(0)
    layer1 = AqlmLoraLinear(QuantizedLinear(16, 12, 8, 1, 1, 4), "default", r=4, lora_alpha=8)
    layer2 = AqlmLoraLinear(QuantizedLinear(12, 6, 4, 1, 1, 4), "default", r=2, lora_alpha=4)
    params = [p for m in (layer1, layer2) for p in m.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=0.1)
    x = torch.randn(2, 3, 16)
    target = torch.randn(2, 3, 6)
    h = torch.relu(layer1(x))
    loss = ((layer2(h) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    out = {"loss": loss.detach()}
    for i, m in enumerate((layer1, layer2)):
        out[f"l{i}_A"] = m.lora_A["default"].weight.grad.clone()
        out[f"l{i}_B"] = m.lora_B["default"].weight.grad.clone()
    opt.step()
    out["l0_A_after"] = layer1.lora_A["default"].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
