# reference fix for 3301: holocron commit af956bae in the library module (3301helpers_holocron_yolo_fixed.py):
# the regression loss computed from `.sqrt()` (out of place) of the wh columns, no write back into the selection.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
yolo = importlib.import_module("3301helpers_holocron_yolo_fixed")


def compute():
    torch.manual_seed(0)
    model = yolo.yolov1(num_classes=3, num_anchors=2)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    images = torch.rand(2, 3, 64, 64)
    gt_boxes = [torch.tensor([[4., 6., 20., 22.], [30., 28., 50., 60.]]),
                torch.tensor([[10., 12., 40., 30.]])]
    gt_labels = [torch.tensor([0, 2]), torch.tensor([1])]

    optimizer.zero_grad()
    loss_dict = model(images, gt_boxes, gt_labels)
    loss = sum(loss_dict.values())
    loss.backward()
    out = {k: v.detach() for k, v in loss_dict.items()}
    out["backbone.0.weight.grad"] = model.backbone[0].weight.grad.clone()
    out["classifier.3.weight.grad"] = model.classifier[3].weight.grad.clone()
    out["classifier.3.bias.grad"] = model.classifier[3].bias.grad.clone()
    optimizer.step()
    out["classifier.3.weight.after_step"] = model.classifier[3].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
