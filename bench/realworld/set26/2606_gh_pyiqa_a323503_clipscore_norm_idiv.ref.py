# reference fix for 2606: commit a323503 in the library module (2606helpers_pyiqa_clipscore_fixed.py):
# `img_features = img_features / img_features.norm(dim=-1, keepdim=True)`, same for the text.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cs = importlib.import_module("2606helpers_pyiqa_clipscore_fixed")


def compute():
    torch.manual_seed(0)
    metric = cs.CLIPScore()
    generator = torch.nn.Linear(8, 3 * 20 * 20)
    z = torch.randn(2, 8)
    img = torch.sigmoid(generator(z)).view(2, 3, 20, 20)
    score = metric(img, caption_list=["a red square on grass", "two dogs"])
    loss = -score.mean()
    loss.backward()
    return {"generator.weight.grad": generator.weight.grad, "generator.bias.grad": generator.bias.grad,
            "score": score.detach()}


if __name__ == "__main__":
    compute()
