"""Zamba `mamba_selective_state_update` (transformers 5.24.0, modeling_zamba.py:275): the recurrent
(cached-decoding) step computes `ssm_state = state.float() * dA + dBx` and then writes the cache in
place: `state.copy_(ssm_state.to(state.dtype))`. `state.float()` is `state` itself when the cache is
float32, so MulBackward saved the tensor the copy_ writes; in another dtype it is a copy.

Path: the function itself (torch fallback) on a float32 cache state of zeros and inputs that require
grad, grad on, backward from its output. Control: the same backward stopped right before the copy_.
Context: a bfloat16 cache state (then `.float()` copies: nothing saved is written); a tiny float32
ZambaForCausalLM (from a config, no download): prefill with use_cache, one decoding step with grad on,
backward. generate() runs this step under torch.no_grad() (as for Bamba).
Run: /work/venvs/real/bin/python bench/hazard_checks/zamba_state_update.py
"""

import torch
from _check import attempt, expect_line, run_through, stop_after
from transformers import ZambaConfig, ZambaForCausalLM
from transformers.models.zamba import modeling_zamba

FINDING = "transformers/models/zamba/modeling_zamba.py:275:IPF103"
update = modeling_zamba.mamba_selective_state_update
expect_line(update, 275, "state.copy_(ssm_state.to(state.dtype))")
expect_line(update, 274, "ssm_state = state.float() * dA + dBx")


def inputs(dtype=torch.float32, batch=1, head_dim=3, size=4):
    """One head's cache state (zeros) and step inputs that require grad, as ZambaMambaMixer passes them."""
    torch.manual_seed(0)
    grad = dict(requires_grad=True)
    return dict(
        state=torch.zeros(batch, head_dim, size, dtype=dtype), hidden_states=torch.randn(batch, head_dim, **grad),
        dt=torch.randn(batch, head_dim, **grad), A=-torch.rand(head_dim, size, **grad),
        B=torch.randn(batch, size, **grad), C=torch.randn(batch, size, **grad), D=torch.randn(head_dim, **grad),
        z=torch.randn(batch, head_dim, **grad), dt_bias=torch.randn(head_dim, **grad), dt_softplus=True,
    )


def step(dtype):
    return lambda: update(**inputs(dtype)).float().sum().backward()


def before_copy():  # control: stopped after line 274, before the copy_
    run_through(update, 274, **inputs())["ssm_state"].sum().backward()


def decoding_step():
    torch.manual_seed(0)
    config = ZambaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=4,
                         num_attention_heads=2, num_key_value_heads=2, n_mamba_heads=2, mamba_d_state=4,
                         attn_layer_period=1, attn_layer_offset=0)  # two hybrid layers: weight tying needs both
    model = ZambaForCausalLM(config).eval()
    prefill = model(torch.randint(0, 32, (1, 5)), use_cache=True)
    scope = stop_after(update, 275, lambda: model(torch.randint(0, 32, (1, 1)), cache=prefill.past_key_values,
                                                  use_cache=True))
    scope["ssm_state"].sum().backward()


attempt(FINDING, "path", "the cached-decoding step function, float32 zeros state, inputs require grad, backward "
        "from its output", step(torch.float32))
attempt(FINDING, "control", "the same, stopped before the copy_, backward from ssm_state", before_copy)
attempt(FINDING, "context", "the same with a bfloat16 cache state (state.float() copies)", step(torch.bfloat16))
attempt(FINDING, "context", "tiny float32 ZambaForCausalLM: prefill with use_cache, one decoding step with grad on "
        "(stopped after the first head's copy_), backward", decoding_step)
