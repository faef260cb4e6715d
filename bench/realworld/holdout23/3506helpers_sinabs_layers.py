# Library module for case 3506: synsense/sinabs at c52b56dd^: sinabs/layers/functional/threshold.py
# (ThresholdSubtract, ThresholdReset), sinabs/layers/spiking_layer.py (SpikingLayer: __init__, zero_grad,
# membrane_subtract, reset_states), sinabs/layers/lif.py (LIF) and sinabs/layers/alif.py (ALIF), reduced to the
# forward path (docstrings, ONNX `symbolic`, __deepcopy__ / _param_dict and the Squeeze wrappers are left out).
from typing import Optional, Union

import torch

# Learning window for surrogate gradient
window = 1.0


class ThresholdSubtract(torch.autograd.Function):
    """Subtract from membrane potential on reaching threshold"""

    @staticmethod
    def forward(ctx, data, threshold=1, window=0.5):
        ctx.save_for_backward(data.clone())
        ctx.threshold = threshold
        ctx.window = window
        return (data > 0) * (data // threshold).float()

    @staticmethod
    def backward(ctx, grad_output):
        (data,) = ctx.saved_tensors
        grad_input = grad_output * ((data >= (ctx.threshold - ctx.window)).float()) / ctx.threshold
        return grad_input, None, None


class ThresholdReset(torch.autograd.Function):
    """Threshold check; step hat gradient"""

    @staticmethod
    def forward(ctx, data, threshold=1, window=0.5):
        ctx.save_for_backward(data)
        ctx.threshold = threshold
        ctx.window = window
        return (data >= ctx.threshold).float()

    @staticmethod
    def backward(ctx, grad_output):
        (data,) = ctx.saved_tensors
        grad_input = grad_output * ((data >= (ctx.threshold - ctx.window)).float())
        return grad_input, None, None


class SpikingLayer(torch.nn.Module):
    def __init__(self, threshold: float = 1.0, threshold_low: Union[float, None] = -1.0,
                 membrane_subtract: Optional[float] = None, membrane_reset=False, *args, **kwargs):
        super().__init__()
        self.threshold = threshold
        self.threshold_low = threshold_low
        self._membrane_subtract = membrane_subtract
        self.membrane_reset = membrane_reset
        self.register_buffer("state", torch.zeros(1))
        self.register_buffer("activations", torch.zeros(1))
        self.spikes_number = None

    def zero_grad(self, set_to_none: bool = False) -> None:
        """Zero's the gradients for buffers/states along with the parameters."""
        super().zero_grad(set_to_none)
        for b in self.buffers():
            if b.grad_fn is not None:
                b.detach_()
            else:
                b.requires_grad_(False)

    @property
    def membrane_subtract(self):
        if self._membrane_subtract is not None:
            return self._membrane_subtract
        else:
            return self.threshold

    def reset_states(self, shape=None, randomize=False):
        if shape is None:
            shape = self.state.shape
        if randomize:
            low = self.threshold_low or -self.threshold
            width = self.threshold - low
            self.state = torch.rand(shape, device=self.state.device) * width + low
            self.activations = torch.zeros(shape, device=self.activations.device)
        else:
            self.state = torch.zeros(shape, device=self.state.device)
            self.activations = torch.zeros(shape, device=self.activations.device)


class LIF(SpikingLayer):
    def __init__(self, tau_mem: Union[float, torch.Tensor], threshold: Union[float, torch.Tensor] = 1.0,
                 threshold_low: Union[float, None] = -1.0, membrane_subtract: Optional[float] = None,
                 membrane_reset=False, *args, **kwargs):
        super().__init__(*args, **kwargs, threshold=threshold, threshold_low=threshold_low,
                         membrane_subtract=membrane_subtract, membrane_reset=membrane_reset)
        self.tau_mem = torch.tensor(tau_mem)
        self.reset_function = ThresholdReset if membrane_reset else ThresholdSubtract

    def check_states(self, input_current):
        """Initialise neuron membrane potential states when the first input is received."""
        shape_without_time = (input_current.shape[0], *input_current.shape[2:])
        if self.state.shape != shape_without_time:
            self.reset_states(shape=shape_without_time, randomize=False)

    def detect_spikes(self):
        """Compute spike outputs for a single time step. This method does not reset the membrane potential."""
        self.activations = self.reset_function.apply(self.state, self.threshold, self.threshold * window)

    def update_state_after_spike(self):
        """Update membrane potentials to either reset or subtract by given value after spikes occured."""
        if self.membrane_reset:
            self.state = self.state * (self.activations == 0.0)
        else:
            self.state = self.state - self.activations * self.membrane_subtract

    def forward(self, input_current: torch.Tensor):
        self.check_states(input_current)
        time_steps = input_current.shape[1]
        output_spikes = torch.zeros_like(input_current)
        for step in range(time_steps):
            # generate spikes
            self.detect_spikes()
            output_spikes[:, step] = self.activations

            # Reset membrane potential for neurons that spiked
            self.update_state_after_spike()

            # Decay the membrane potential
            alpha = torch.exp(-1.0 / self.tau_mem)
            self.state *= alpha

            # Add the input currents to membrane potential state
            self.state += input_current[:, step]

            # Clip membrane potential that is too low
            if self.threshold_low:
                self.state = torch.clamp(self.state, min=self.threshold_low)

        self.tw = time_steps
        self.spikes_number = output_spikes.abs().sum()
        return output_spikes


class ALIF(LIF):
    def __init__(self, tau_mem: Union[float, torch.Tensor], tau_threshold: Union[float, torch.Tensor],
                 threshold: Union[float, torch.Tensor] = 1.0, threshold_low: Union[float, None] = -1.0,
                 threshold_adaptation: Union[float, torch.Tensor] = 0.1, membrane_subtract: Optional[float] = None,
                 membrane_reset=False, *args, **kwargs):
        super().__init__(tau_mem=tau_mem, threshold=threshold, threshold_low=threshold_low,
                         membrane_subtract=membrane_subtract, membrane_reset=membrane_reset, *args, **kwargs)
        self.tau_threshold = torch.tensor(tau_threshold)
        self.threshold_adaptation = torch.tensor(threshold_adaptation)
        self.resting_threshold = self.threshold
        delattr(self, 'threshold')
        self.register_buffer("threshold", torch.zeros(1))

    def check_states(self, input_current):
        """Initialise spike threshold states when the first input is received."""
        super().check_states(input_current)
        if self.threshold.shape == torch.Size([1]):
            self.threshold = torch.ones_like(input_current[:, 0]) * self.resting_threshold

    def update_state_after_spike(self):
        """Use LIF's update_state_after_spike method as a hook to update neuron threshold states."""
        super().update_state_after_spike()
        self.adapt_threshold_state(self.activations)

    def adapt_threshold_state(self, output_spikes):
        """Decay the spike threshold and add adaption constant to it."""
        self.threshold -= self.resting_threshold
        beta = torch.exp(-1.0 / self.tau_threshold)
        self.threshold *= beta
        self.threshold += output_spikes * self.threshold_adaptation + self.resting_threshold

    def reset_states(self, shape=None, randomize=False):
        """Reset the state of all neurons and threshold states in this layer."""
        super().reset_states(shape, randomize)
        if shape is None:
            shape = self.threshold.shape
        if randomize:
            self.threshold = torch.rand(shape, device=self.threshold.device)
        else:
            self.threshold = torch.ones(shape, device=self.threshold.device) * self.resting_threshold
