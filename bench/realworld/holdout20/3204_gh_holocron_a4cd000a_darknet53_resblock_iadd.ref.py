# reference fix for 3204: holocron PR #70 (commit a4cd000a) in the library module
# (3204helpers_holocron_darknet_fixed.py): DarkBlockV3 sets `self.conv[-1].inplace = False`.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
darknet = importlib.import_module("3204helpers_holocron_darknet_fixed")


def compute():
    torch.manual_seed(0)
    model = darknet.darknet53(num_classes=10)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    x = torch.randn(2, 3, 16, 16)
    y = torch.tensor([3, 7])
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    features = model.features
    block = features[6][0]
    out = {
        "loss": loss.detach(),
        "logits": logits.detach(),
        "stem.weight.grad": features[0].weight.grad.clone(),
        "block.conv0.weight.grad": block.conv[0].weight.grad.clone(),
        "block.conv3.weight.grad": block.conv[3].weight.grad.clone(),
        "classifier.weight.grad": model.classifier.weight.grad.clone(),
    }
    optimizer.step()
    out["classifier.weight.after_step"] = model.classifier.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
