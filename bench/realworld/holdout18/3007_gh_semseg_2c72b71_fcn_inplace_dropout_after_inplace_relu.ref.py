# reference fix for 3007: commit 2c72b71 in the library module (3007helpers_fcn32_fixed.py): `nn.Dropout()`
# (out of place) after each in-place ReLU of the FCN head.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fcn32 = importlib.import_module("3007helpers_fcn32_fixed")


def compute():
    torch.manual_seed(0)
    net = fcn32.FCN32VGG(num_classes=3)
    net.train()
    criterion = fcn32.CrossEntropyLoss2d()
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)
    inputs = torch.randn(2, 3, 16, 16)
    labels = torch.randint(0, 3, (2, 16, 16))
    losses = []
    for _ in range(2):
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return {
        "losses": torch.stack(losses),
        "score5.6.weight": net.score5[6].weight.detach(),
        "score5.0.weight.grad": net.score5[0].weight.grad,
        "score5.3.weight.grad": net.score5[3].weight.grad,
        "features5.0.weight.grad": net.features5[0].weight.grad,
        "upscore5.weight.grad": net.upscore5.weight.grad,
    }


if __name__ == "__main__":
    compute()
