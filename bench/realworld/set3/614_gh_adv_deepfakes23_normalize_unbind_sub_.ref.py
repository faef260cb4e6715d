# reference fix for 614: Normalize from 614helpers_adv_deepfakes_transform_fixed.py (a fork's out-of-place
# normalisation); the attack code is unchanged.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn
from torch import autograd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
_transform = import_module("614helpers_adv_deepfakes_transform_fixed")
xception_default_data_transforms = _transform.xception_default_data_transforms
mesonet_default_data_transforms = _transform.mesonet_default_data_transforms


def predict_with_model(preprocessed_image, model, model_type, post_function=nn.Softmax(dim=1), cuda=True):
    if model_type == "xception":
        resized_image = nn.functional.interpolate(preprocessed_image, size=(299, 299), mode="bilinear", align_corners=True)
        norm_transform = xception_default_data_transforms['normalize']
    elif model_type == "meso":
        resized_image = nn.functional.interpolate(preprocessed_image, size=(256, 256), mode="bilinear", align_corners=True)
        norm_transform = mesonet_default_data_transforms['normalize']

    normalized_image = norm_transform(resized_image)

    logits = model(normalized_image)
    output = post_function(logits)

    _, prediction = torch.max(output, 1)  # argmax
    prediction = float(prediction.item())
    return int(prediction), output, logits


def iterative_fgsm(input_img, model, model_type, cuda=True, max_iter=1, alpha=1 / 255.0, eps=16 / 255.0, desired_acc=0.99):
    input_var = autograd.Variable(input_img, requires_grad=True)
    target_var = autograd.Variable(torch.LongTensor([0]))
    iter_no = 0
    grads = {}
    while iter_no < max_iter:
        prediction, output, logits = predict_with_model(input_var, model, model_type, cuda=cuda)
        if (output[0][0] - output[0][1]) > desired_acc:
            break
        loss_criterion = nn.CrossEntropyLoss()
        loss = loss_criterion(logits, target_var)
        if input_var.grad is not None:
            input_var.grad.data.zero_()
        loss.backward()
        grads["input_var"] = input_var.grad.detach().clone()

        step_adv = input_var.detach() - alpha * torch.sign(input_var.grad.detach())
        total_pert = step_adv - input_img
        total_pert = torch.clamp(total_pert, -eps, eps)
        input_adv = input_img + total_pert
        input_adv = torch.clamp(input_adv, 0, 1)
        input_var.data = input_adv.detach()
        iter_no += 1
    grads["adversarial"] = input_var.detach().clone()
    return input_var, grads


class TinyMeso(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, stride=4, padding=1), nn.ReLU(), nn.MaxPool2d(4),
                                      nn.Conv2d(4, 4, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def compute():
    torch.manual_seed(0)
    model = TinyMeso().eval()
    face = torch.rand(1, 3, 64, 64)  # preprocessed face crop in [0, 1]
    _, grads = iterative_fgsm(face, model, "meso", cuda=False)
    grads.update({n: p.grad for n, p in model.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
