# reference fix for 1005: PR #1104 in the library module (1005helpers_modelopt_eagle_fixed.py): clone eagle_input_hiddens before the indexed assignment.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
eagle = importlib.import_module("1005helpers_modelopt_eagle_fixed")


def compute():
    torch.manual_seed(0)
    model = eagle.HFEagleModel()
    model.train()
    input_ids = torch.randint(0, 16, (2, 6))
    loss = model(input_ids)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
