# pytorch_grad_cam/activations_and_gradients.py (jacobgil/pytorch-grad-cam) as of the parent of commit a9511f6 ("Use
# forward hook instead of backward hook to avoid the incompatibility between backward hook and inplace operation"),
# copied whole: ActivationsAndGradients records each target layer's output with a forward hook and its gradient with
# `register_full_backward_hook`, which returns the layer's output as a view from BackwardHookFunction; a model that
# applies an in-place activation to a target layer's output (a BatchNorm followed by `nn.ReLU(inplace=True)`, as in
# ResNets) then fails in its forward pass with "Output 0 of BackwardHookFunctionBackward is a view and is being
# modified inplace". The fix records the gradient with a tensor hook registered from a forward hook.
# Stand-ins: none in this class.
class ActivationsAndGradients:
    """ Class for extracting activations and
    registering gradients from targetted intermediate layers """

    def __init__(self, model, target_layers, reshape_transform):
        self.model = model
        self.gradients = []
        self.activations = []
        self.reshape_transform = reshape_transform
        self.handles = []
        for target_layer in target_layers:
            self.handles.append(
                target_layer.register_forward_hook(
                    self.save_activation))
            # Backward compitability with older pytorch versions:
            if hasattr(target_layer, 'register_full_backward_hook'):
                self.handles.append(
                    target_layer.register_full_backward_hook(
                        self.save_gradient))
            else:
                self.handles.append(
                    target_layer.register_backward_hook(
                        self.save_gradient))

    def save_activation(self, module, input, output):
        activation = output
        if self.reshape_transform is not None:
            activation = self.reshape_transform(activation)
        self.activations.append(activation.cpu().detach())

    def save_gradient(self, module, grad_input, grad_output):
        # Gradients are computed in reverse order
        grad = grad_output[0]
        if self.reshape_transform is not None:
            grad = self.reshape_transform(grad)
        self.gradients = [grad.cpu().detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()
