# Library module for case 2501, FIXED as in commit 8b4305f2 ("do not use inplace operation, to avoid the gradient
# problem"): a small re-implementation of the parts of spikingjelly.clock_driven (v0.0.0.0.x,
# late 2021) that the program uses: the sigmoid surrogate spike function, the stateful-module base class, the
# integrate-and-fire neuron, the low-pass synapse filter used as a read-out layer, and MultiStepContainer, which
# runs single-step modules over the time dimension. Written anew from the files at the parent of commit 8b4305f2;
# only the culprit statement is kept as it was: MultiStepContainer.forward calls `y_seq[t].unsqueeze_(0)` on every
# step's output before concatenating them.
# Stand-ins: no docstrings, no CUDA kernels, one surrogate function (Sigmoid, alpha 1.0 as in the source), the
# stateful base class reduced to named state variables with initial values and reset().
import math

import torch
import torch.nn as nn


class _SigmoidSpike(torch.autograd.Function):
    """Heaviside step forward, derivative of sigmoid(alpha * x) backward (saves the input)."""

    @staticmethod
    def forward(ctx, x, alpha):
        if x.requires_grad:
            ctx.save_for_backward(x)
            ctx.alpha = alpha
        return (x >= 0).to(x)

    @staticmethod
    def backward(ctx, grad_output):
        if not ctx.needs_input_grad[0]:
            return None, None
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x * ctx.alpha)
        return grad_output * s * (1. - s) * ctx.alpha, None


class Sigmoid(nn.Module):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return _SigmoidSpike.apply(x, self.alpha)


class MemoryModule(nn.Module):
    """State variables kept outside the parameters, restored to their initial values by reset()."""

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "_state", {})
        object.__setattr__(self, "_state_init", {})

    def register_memory(self, name, value):
        self._state[name] = value
        self._state_init[name] = value

    def reset(self):
        self._state.update(self._state_init)

    def __getattr__(self, name):
        state = self.__dict__.get("_state")
        if state is not None and name in state:
            return state[name]
        return super().__getattr__(name)

    def __setattr__(self, name, value):
        state = self.__dict__.get("_state")
        if state is not None and name in state:
            state[name] = value
        else:
            super().__setattr__(name, value)


class IFNode(MemoryModule):
    """Integrate-and-fire neuron: charge v += x, fire through the surrogate, hard reset to v_reset."""

    def __init__(self, v_threshold=1., v_reset=0., surrogate_function=None, detach_reset=False):
        super().__init__()
        self.register_memory("v", 0. if v_reset is None else v_reset)
        self.register_memory("spike", 0.)
        self.v_threshold = v_threshold
        self.v_reset = v_reset
        self.detach_reset = detach_reset
        self.surrogate_function = Sigmoid() if surrogate_function is None else surrogate_function

    def forward(self, x):
        self.v = self.v + x
        self.spike = self.surrogate_function(self.v - self.v_threshold)
        s = self.spike.detach() if self.detach_reset else self.spike
        if self.v_reset is None:
            self.v = self.v - s * self.v_threshold
        else:
            self.v = (1. - s) * self.v + s * self.v_reset
        return self.spike


class SynapseFilter(MemoryModule):
    """Low-pass synapse: the current decays by 1/tau where no spike arrives and is set up by each input spike."""

    def __init__(self, tau=100.0, learnable=False):
        super().__init__()
        self.learnable = learnable
        if learnable:
            self.w = nn.Parameter(torch.as_tensor(-math.log(tau - 1)))
        else:
            self.tau = tau
        self.register_memory("out_i", 0.)

    def forward(self, in_spikes):
        inv_tau = self.w.sigmoid() if self.learnable else 1. / self.tau
        # the previous current is multiplied by a tensor that requires grad: MulBackward0 saves it
        self.out_i = self.out_i - (1 - in_spikes) * self.out_i * inv_tau + in_spikes
        return self.out_i


class MultiStepContainer(nn.Sequential):
    """Wraps single-step modules: x_seq [T, N, ...] -> y_seq [T, N, ...], one step at a time."""

    def forward(self, x_seq):
        y_seq = []
        for t in range(x_seq.shape[0]):
            y_seq.append(super().forward(x_seq[t]))

        for t in range(y_seq.__len__()):
            y_seq[t] = y_seq[t].unsqueeze(0)
        return torch.cat(y_seq, 0)


def reset_net(net):
    for m in net.modules():
        if isinstance(m, MemoryModule):
            m.reset()
