# Written anew at small size after norse/norse at the parent of commit 6f7f6229 (PR #327): norse/torch/functional/
# encode.py (spike_latency_lif_encode), lif.py (LIFParameters, lif_current_encoder), threshold.py (threshold),
# superspike.py (SuperSpike, the surrogate gradient) and heaviside.py.
# The culprit, as in encode.py: the latency encoder keeps a boolean `mask` of the neurons that already spiked and
# emits `torch.where(mask, torch.zeros_like(z), z)` each step, then marks new spikes with `mask[z.bool()] = 1`.
# WhereBackward0 saves its condition, so the next write into `mask` changes a tensor the backward needs: a model
# placed before the encoder cannot be trained through it ("... [CPUBoolType [...]] is at version N; expected
# version N-1").
# Stand-ins: only the "super" threshold method is kept (the default); torch.jit decorations are dropped.
from typing import NamedTuple, Tuple

import torch


def heaviside(data):
    return torch.gt(data, torch.as_tensor(0.0)).to(data.dtype)


class SuperSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_tensor, alpha):
        ctx.save_for_backward(input_tensor)
        ctx.alpha = alpha
        return heaviside(input_tensor)

    @staticmethod
    def backward(ctx, grad_output):
        (inp,) = ctx.saved_tensors
        grad = grad_output.clone() / (ctx.alpha * torch.abs(inp) + 1.0).pow(2)
        return grad, None


def threshold(x, method, alpha):
    if method == "heaviside":
        return heaviside(x)
    if method == "super":
        return SuperSpike.apply(x, torch.as_tensor(alpha))
    raise ValueError("unknown threshold method %s" % method)


class LIFParameters(NamedTuple):
    tau_syn_inv: torch.Tensor = torch.as_tensor(1.0 / 5e-3)
    tau_mem_inv: torch.Tensor = torch.as_tensor(1.0 / 1e-2)
    v_leak: torch.Tensor = torch.as_tensor(0.0)
    v_th: torch.Tensor = torch.as_tensor(1.0)
    v_reset: torch.Tensor = torch.as_tensor(0.0)
    method: str = "super"
    alpha: float = torch.as_tensor(100.0)


def lif_current_encoder(input_current, voltage, p: LIFParameters = LIFParameters(),
                        dt: float = 0.001) -> Tuple[torch.Tensor, torch.Tensor]:
    dv = dt * p.tau_mem_inv * ((p.v_leak - voltage) + input_current)
    voltage = voltage + dv
    z = threshold(voltage - p.v_th, p.method, p.alpha)
    voltage = voltage - z * (voltage - p.v_reset)
    return z, voltage


def spike_latency_lif_encode(input_current, seq_length: int, p: LIFParameters = LIFParameters(), dt=0.001):
    """Encodes an input value by the time the first spike occurs (LIF with an infinite refractory period)."""
    voltage = torch.zeros_like(input_current)
    z = torch.zeros_like(input_current)
    mask = torch.zeros_like(input_current).bool()
    spikes = []

    for _ in range(seq_length):
        z, voltage = lif_current_encoder(input_current=input_current, voltage=voltage, p=p, dt=dt)
        spikes += [torch.where(mask, torch.zeros_like(z), z)]
        mask[z.bool()] = 1

    return torch.stack(spikes)
