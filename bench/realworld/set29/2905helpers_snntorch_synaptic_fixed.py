# Library module for case 2905 (reference: the fix of commit a204457, the resets written out of place).
# jeshraghian/snntorch, snntorch/_neurons/neurons.py (SpikingNeuron, LIF, the ATan surrogate) and
# snntorch/_neurons/synaptic.py (Synaptic), read at the parent of commit a204457 ("fix reset_delay (+ add for (r)leaky)",
# 2023-10-24). Written anew at small size (not copied): the threshold / graded-spikes / reset-mechanism buffers,
# `fire` and the detached `mem_reset`, the ATan surrogate spike, Synaptic's state functions for the three reset
# mechanisms and its `forward` for explicit states with the `reset_delay=False` branch as the fix writes it
# (`mem = mem - do_reset * self.threshold`, `mem = mem - do_reset * mem`) follow the source.
# Stand-ins: no hidden-state mode (init_hidden), inhibition, state quantization, learnable alpha / beta / threshold,
# instance registry or _SpikeTensor initial states (the caller passes zero tensors).
import math

import torch
import torch.nn as nn


class SpikingNeuron(nn.Module):
    reset_dict = {"subtract": 0, "zero": 1, "none": 2}

    def __init__(self, threshold=1.0, spike_grad=None, reset_mechanism="subtract", graded_spikes_factor=1.0):
        super().__init__()
        self.register_buffer("threshold", torch.as_tensor(threshold))
        self.register_buffer("graded_spikes_factor", torch.as_tensor(graded_spikes_factor))
        self.register_buffer("reset_mechanism_val", torch.as_tensor(SpikingNeuron.reset_dict[reset_mechanism]))
        if spike_grad is None:
            self.spike_grad = self.ATan.apply
        else:
            self.spike_grad = spike_grad

    def fire(self, mem):
        mem_shift = mem - self.threshold
        spk = self.spike_grad(mem_shift)
        spk = spk * self.graded_spikes_factor
        return spk

    def mem_reset(self, mem):
        mem_shift = mem - self.threshold
        reset = self.spike_grad(mem_shift).clone().detach()
        return reset

    class ATan(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input_, alpha=2.0):
            ctx.save_for_backward(input_)
            ctx.alpha = alpha
            out = (input_ > 0).float()
            return out

        @staticmethod
        def backward(ctx, grad_output):
            (input_,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad = ctx.alpha / 2 / (1 + (math.pi / 2 * ctx.alpha * input_).pow_(2)) * grad_input
            return grad, None


class LIF(SpikingNeuron):
    def __init__(self, beta, threshold=1.0, spike_grad=None, reset_mechanism="subtract"):
        super().__init__(threshold, spike_grad, reset_mechanism)
        self.register_buffer("beta", torch.as_tensor(beta))


class Synaptic(LIF):
    def __init__(self, alpha, beta, threshold=1.0, spike_grad=None, reset_mechanism="subtract", reset_delay=True):
        super().__init__(beta, threshold, spike_grad, reset_mechanism)
        self.register_buffer("alpha", torch.as_tensor(alpha))
        self.reset_delay = reset_delay

    def forward(self, input_, syn, mem):
        self.reset = self.mem_reset(mem)
        syn, mem = self._build_state_function(input_, syn, mem)
        spk = self.fire(mem)

        if not self.reset_delay:
            # reset membrane potential _right_ after spike
            do_reset = spk / self.graded_spikes_factor - self.reset  # avoid double reset
            if self.reset_mechanism_val == 0:  # reset by subtraction
                mem = mem - do_reset * self.threshold
            elif self.reset_mechanism_val == 1:  # reset to zero
                mem = mem - do_reset * mem

        return spk, syn, mem

    def _base_state_function(self, input_, syn, mem):
        base_fn_syn = self.alpha.clamp(0, 1) * syn + input_
        base_fn_mem = self.beta.clamp(0, 1) * mem + base_fn_syn
        return base_fn_syn, base_fn_mem

    def _base_state_reset_zero(self, input_, syn, mem):
        base_fn_syn = self.alpha.clamp(0, 1) * syn + input_
        base_fn_mem = self.beta.clamp(0, 1) * mem + base_fn_syn
        return 0, base_fn_mem

    def _build_state_function(self, input_, syn, mem):
        if self.reset_mechanism_val == 0:  # reset by subtraction
            state_fn = tuple(map(lambda x, y: x - y, self._base_state_function(input_, syn, mem),
                                 (0, self.reset * self.threshold)))
        elif self.reset_mechanism_val == 1:  # reset to zero
            state_fn = tuple(map(lambda x, y: x - self.reset * y, self._base_state_function(input_, syn, mem),
                                 self._base_state_reset_zero(input_, syn, mem)))
        else:  # no reset, pure integration
            state_fn = self._base_state_function(input_, syn, mem)
        return state_fn
