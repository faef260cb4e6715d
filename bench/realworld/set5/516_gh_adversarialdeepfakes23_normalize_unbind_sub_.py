# source: https://github.com/paarthneekhara/AdversarialDeepFakes/issues/23
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# attack_algos.robust_fgsm() -> predict_with_model(): the "differentiable image pre-processing" resizes the
# adversarial input (requires_grad) and applies the repo's own Normalize transform (dataset/transform.py, here
# 516helpers_transform.py), which loops `for t, m, s in zip(tensor, self.mean, self.std): t.sub_(m).div_(s)` over
# the unbind() views of the resized batch -> "Output 0 of UnbindBackward0 is a view and is being modified
# inplace" on current torch. No fix was posted (open issue); the ref is the obvious out-of-place rewrite that
# keeps the gradient path: write (t - m) / s into a clone (516helpers_transform_fixed.py).
# Note the loop zips over the batch dimension (kept as in the source; batch size 1 here).
# MesoNet is replaced by a small conv net; only the identity transform of robust_fgsm is used, 2 iterations.
import importlib.util
import os

import torch
import torch.nn as nn
from torch import autograd


def _load(name):
    spec = importlib.util.spec_from_file_location(
        "transform", os.path.join(os.path.dirname(os.path.abspath(__file__)), name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_transform = _load("516helpers_transform.py")
mesonet_default_data_transforms = _transform.mesonet_default_data_transforms


def predict_with_model(preprocessed_image, model, model_type, post_function=nn.Softmax(dim=1), cuda=True):
    # differentiable resizing: doing resizing here instead of preprocessing
    if model_type == "meso":
        resized_image = nn.functional.interpolate(preprocessed_image, size = (256, 256), mode = "bilinear", align_corners = True)
        norm_transform = mesonet_default_data_transforms['normalize']

    normalized_image = norm_transform(resized_image)

    logits = model(normalized_image)
    output = post_function(logits)

    # Cast to desired
    _, prediction = torch.max(output, 1)    # argmax
    prediction = float(prediction.item())
    return int(prediction), output, logits


def robust_fgsm(input_img, model, model_type, cuda = True,
    max_iter = 100, alpha = 1/255.0,
    eps = 16/255.0, desired_acc = 0.95,
    transform_set = set()
    ):

    def _get_transforms(apply_transforms = set()):
        transform_list = [
            lambda x: x,
        ]
        return transform_list

    input_var = autograd.Variable(input_img, requires_grad=True)
    grads = {}

    iter_no = 0

    while iter_no < max_iter:
        transform_functions = _get_transforms(transform_set)

        loss = 0

        all_fooled = True
        for transform_fn in transform_functions:

            transformed_img = transform_fn(input_var)
            prediction, output, logits = predict_with_model(transformed_img, model, model_type, cuda=cuda)

            if output[0][0] < desired_acc:
                all_fooled = False
            loss += torch.clamp( logits[0][1]-logits[0][0] + 10, min = 0.0)

        if all_fooled:
            break

        loss /= (1. * len(transform_functions))
        if input_var.grad is not None:
            input_var.grad.data.zero_() # just to ensure nothing funny happens
        loss.backward()
        grads["iter%d.input_var.grad" % iter_no] = input_var.grad.clone()

        step_adv = input_var.detach() - alpha * torch.sign(input_var.grad.detach())
        total_pert = step_adv - input_img
        total_pert = torch.clamp(total_pert, -eps, eps)

        input_adv = input_img + total_pert
        input_adv = torch.clamp(input_adv, 0, 1)

        input_var.data = input_adv.detach()

        iter_no += 1

    grads["input_var"] = input_var.detach().clone()
    return grads


def compute():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 5, stride=8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 2)).eval()
    input_img = torch.rand(1, 3, 32, 32)
    return robust_fgsm(input_img, model, "meso", cuda=False, max_iter=2)


if __name__ == "__main__":
    compute()
