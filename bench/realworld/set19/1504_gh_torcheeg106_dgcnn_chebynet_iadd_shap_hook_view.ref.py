# source: https://github.com/torcheeg/torcheeg/pull/106
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# REFERENCE (PR #106: the sum out of place, in the fixed helper).
# torcheeg (EEG emotion recognition), DGCNN's Chebynet.forward sums the graph convolutions of the Chebyshev supports
# in place, `result += self.gc1[i](x, adj[i])`. Explaining the model with shap's DeepExplainer registers a full
# backward hook on every leaf module, so each GraphConvolution output comes back through
# BackwardHookFunction returned as-is: "Output 0 of BackwardHookFunctionBackward is a view and is being modified
# inplace. This view was created inside a custom Function (or because an input was returned as-is) ... You can fix
# this by cloning the output of the custom Function." (the PR quotes the traceback from shap's deep_pytorch.gradient
# into dgcnn.py's forward; the message above is the one this program raises on torch 2.13). Fix
# (PR #106, merged): `result = result+  self.gc1[i](x, adj[i])`.
# The library module is 1504helpers_torcheeg_dgcnn.py (ref: 1504helpers_torcheeg_dgcnn_fixed.py).
# Stand-ins: `DeepExplainerStandIn` for shap.DeepExplainer's PyTorch path, reduced to what reaches the error: hooks
# on the leaf modules as shap's `add_handles` registers them (a forward hook recording inputs and outputs, a full
# backward hook that passes the gradient through, as it does for the linear layers here), the model in eval mode,
# and `gradient()`: the selected output's gradient with respect to the (background-joined) input, via
# torch.autograd.grad. Small sizes (8 electrodes, 5 band features).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
dgcnn = importlib.import_module("1504helpers_torcheeg_dgcnn_fixed")


class DeepExplainerStandIn:
    def __init__(self, model, data):
        self.model = model.eval()
        self.data = data
        self.handles = self.add_handles(model, self.add_interim_values, self.deeplift_grad)

    def add_handles(self, model, forward_handle, backward_handle):
        handles_list = []
        model_children = list(model.children())
        if model_children:
            for child in model_children:
                handles_list.extend(self.add_handles(child, forward_handle, backward_handle))
        else:  # leaves
            handles_list.append(model.register_forward_hook(forward_handle))
            handles_list.append(model.register_full_backward_hook(backward_handle))
        return handles_list

    @staticmethod
    def add_interim_values(module, input, output):
        module.x = input[0].detach()
        module.y = output.detach()

    @staticmethod
    def deeplift_grad(module, grad_input, grad_output):
        return None  # linear layers: the gradient passes unchanged

    def gradient(self, idx, inputs):
        self.model.zero_grad()
        X = inputs.detach().requires_grad_()
        outputs = self.model(X)
        selected = [val for val in outputs[:, idx]]
        grads = torch.autograd.grad(selected, X)
        return grads[0]


def compute():
    torch.manual_seed(0)
    model = dgcnn.DGCNN(in_channels=5, num_electrodes=8, num_layers=3, hid_channels=4, num_classes=2)
    background = torch.randn(6, 8, 5)
    test = torch.randn(2, 8, 5)
    explainer = DeepExplainerStandIn(model, background)
    joint_x = torch.cat([test, background[:2]], dim=0)
    out = {}
    for feature_ind in range(2):
        out[f"grad_class{feature_ind}"] = explainer.gradient(feature_ind, joint_x)
    return out


if __name__ == "__main__":
    compute()
