"""Bamba `mamba2_selective_state_update` (transformers 5.24.0, modeling_bamba.py:443): the
recurrent (cached-decoding) step computes `ssm_states = state * dA + dBx`, so MulBackward saves
`state` (dA requires grad), then writes the cache in place: `state.copy_(ssm_states...)`.

Path: the function itself (its torch fallback: mamba_ssm is not installed) on a cache state of zeros
and inputs that require grad, grad on, backward from its output. Control: the same backward stopped
right before the copy_. Context: a tiny BambaForCausalLM (built from a config, no download): a
prefill with use_cache, then one decoding step with the cache, grad on, backward; and generate(),
the library's own caller of this step, which runs under torch.no_grad().
Run: /work/venvs/real/bin/python bench/hazard_checks/bamba_state_update.py
"""

import torch
from _check import attempt, expect_line, run_through, stop_after
from transformers import BambaConfig, BambaForCausalLM
from transformers.models.bamba import modeling_bamba

FINDING = "transformers/models/bamba/modeling_bamba.py:443:IPF103"
update = modeling_bamba.mamba2_selective_state_update
expect_line(update, 443, "state.copy_(ssm_states.to(state.dtype))")
expect_line(update, 442, "ssm_states = state * dA + dBx")


def inputs(batch=1, heads=2, head_dim=3, groups=1, size=4):
    """A cache state (zeros, as the cache holds it) and step inputs that require grad."""
    torch.manual_seed(0)
    grad = dict(requires_grad=True)
    return dict(
        state=torch.zeros(batch, heads, head_dim, size), hidden_states=torch.randn(batch, heads, head_dim, **grad),
        dt=torch.randn(batch, heads, head_dim, **grad), A=-torch.rand(heads, head_dim, size, **grad),
        B=torch.randn(batch, groups, size, **grad), C=torch.randn(batch, groups, size, **grad),
        D=torch.randn(heads, head_dim, **grad), dt_bias=torch.randn(heads, head_dim, **grad), dt_softplus=True,
    )


def step():
    update(**inputs()).sum().backward()


def before_copy():  # control: stopped after line 442, before the copy_
    run_through(update, 442, **inputs())["ssm_states"].sum().backward()


def tiny_model():
    torch.manual_seed(0)
    config = BambaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, mamba_n_heads=2, mamba_d_head=16,
                         mamba_n_groups=1, mamba_d_state=4, mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=4,
                         attn_layer_indices=[1])
    return BambaForCausalLM(config).eval()


def decoding_step():
    model = tiny_model()
    prefill = model(torch.randint(0, 32, (1, 5)), use_cache=True)
    # isolate: stop the decoding step right after the first layer's state copy_
    scope = stop_after(update, 443, lambda: model(torch.randint(0, 32, (1, 1)),
                                                  cache=prefill.past_key_values, use_cache=True))
    scope["ssm_states"].sum().backward()


def generate():
    model = tiny_model()
    out = model.generate(torch.randint(0, 32, (1, 5)), max_new_tokens=2, do_sample=False)
    assert not out.requires_grad  # generate() is decorated with torch.no_grad(): nothing to backward


attempt(FINDING, "path", "the cached-decoding step function, zeros state, inputs require grad, backward from "
        "its output", step)
attempt(FINDING, "control", "the same, stopped before the copy_, backward from ssm_states", before_copy)
attempt(FINDING, "context", "tiny BambaForCausalLM: prefill with use_cache, one decoding step with grad on "
        "(stopped after layer 0's copy_), backward", decoding_step)
attempt(FINDING, "context", "tiny BambaForCausalLM.generate() (runs under torch.no_grad): no backward possible",
        generate)
