# reference fix for 3304: YOLOv5 commit 305c6a0 in the library module (3304helpers_yolov5_utils_fixed.py): the
# three loss accumulators made as three separate `torch.zeros(1)` tensors.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
yolo = importlib.import_module("3304helpers_yolov5_yolo")
utils = importlib.import_module("3304helpers_yolov5_utils_fixed")

# train.py's hyperparameters at the time (the loss-related ones)
hyp = {'lr0': 0.01, 'momentum': 0.937, 'weight_decay': 5e-4, 'giou': 0.05, 'cls': 0.5, 'cls_pw': 1.0, 'obj': 1.0,
       'obj_pw': 1.0, 'iou_t': 0.20, 'anchor_t': 4.0, 'fl_gamma': 0.0}


def compute():
    torch.manual_seed(0)
    nc = 3
    model = yolo.Model(nc=nc)
    model.nc = nc  # attach number of classes to model
    model.hyp = hyp  # attach hyperparameters to model
    model.gr = 1.0  # giou loss ratio (obj_loss = 1.0 or giou)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=hyp['lr0'], momentum=hyp['momentum'], nesterov=True)

    imgs = torch.rand(2, 3, 64, 64)
    # targets: (image, class, x, y, w, h), normalised
    targets = torch.tensor([[0, 0, 0.30, 0.40, 0.25, 0.30],
                            [0, 2, 0.70, 0.60, 0.40, 0.35],
                            [1, 1, 0.50, 0.45, 0.55, 0.60],
                            [1, 0, 0.20, 0.75, 0.15, 0.20]])

    pred = model(imgs)
    loss, loss_items = utils.compute_loss(pred, targets, model)
    optimizer.zero_grad()
    loss.backward()
    out = {
        "loss": loss.detach(),
        "loss_items": loss_items,
        "detect.m0.weight.grad": model.model[-1].m[0].weight.grad.clone(),
        "detect.m2.bias.grad": model.model[-1].m[2].bias.grad.clone(),
        "stem.0.conv.weight.grad": model.stem[0][0].weight.grad.clone(),
    }
    optimizer.step()
    out["detect.m1.weight.after_step"] = model.model[-1].m[1].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
