"""ibm-fms 1.13.1 (fms/modules/ssm.py:343 `SSM.forward`, the cached single-token step): the proven finding of
`inplacefix check` (stop 58, fresh58, end of stop). With a cache that has a previous state and one new token,
`past_key_value_state.ssm_state.copy_(past_key_value_state.ssm_state * dA + dBx)` (:343-:345) writes the state that
the product `ssm_state * dA` saved (dA comes from the layer's A_log and dt_bias parameters, which require grad): with
grad on, backward of the layer's output raises. Real by this file's convention (a decode step run with grad on; the
library's generation runs under no_grad). Rebinding the state out of place runs. RMSNormGated, SSMCacheUnit, SSM
and the module's helpers are compiled alone from the shipped file (fms/__init__ needs installed metadata), with
nn.SiLU for str_to_activation("silu")."""

import _shim  # noqa: F401
import linecache
from typing import Optional

import torch
import torch.nn as nn
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("fms/modules/ssm.py")
assert linecache.getline(PATH, 343).strip() == "past_key_value_state.ssm_state.copy_(  # type: ignore[union-attr]"
NAMES = {"pad_tensor_by_size", "reshape_into_chunks", "segment_sum", "RMSNormGated", "SSMCacheUnit",
         "apply_mask_to_padding_states", "SSM"}


def run(shipped):
    replace = {} if shipped else {343: "past_key_value_state.ssm_state = past_key_value_state.ssm_state * dA + dBx"}
    ns = compile_alone(PATH, NAMES, {"torch": torch, "nn": nn, "Optional": Optional,
                                     "str_to_activation": lambda name: nn.SiLU()}, replace=replace)

    def go():
        torch.manual_seed(0)
        layer = ns["SSM"](nheads=2, emb_dim=8, state_size=4, conv_kernel=4, expand=2, use_bias=False,
                          use_conv_bias=True, activation_fn="silu", norm_eps=1e-5, n_groups=1, head_dim=8,
                          chunk_size=4)
        cache = ns["SSMCacheUnit"](emb_dim=8, nheads=2, head_dim=8, conv_kernel=4, expand=2, n_groups=1,
                                   state_size=4, batch_size=1, dtype=torch.float32)
        cache.has_previous_state = True
        cache.ssm_state.normal_()
        out, _ = layer(torch.randn(1, 1, 8), None, past_key_value_state=cache, cache_position=torch.tensor([5]))
        out.sum().backward()
        assert layer.A_log.grad is not None
    return go


FID = "fms/modules/ssm.py:343:IPF103"
attempt(FID, "path", "SSM.forward(one token, a cache with a previous state) with grad on: the state copy_ spoils what "
        "`ssm_state * dA` saved, backward of the output raises", run(True))
attempt(FID, "control", "the state rebound out of place: runs", run(False))
