# reference fix for 3201: NNI commit c892912a in the library modules (3201helpers_nni_darts_model_fixed.py,
# 3201helpers_nni_darts_ops_fixed.py): DropPath_ (in place) replaced by DropPath, `return x / keep_prob * mask`.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
model_lib = importlib.import_module("3201helpers_nni_darts_model_fixed")
mutables = importlib.import_module("3201helpers_nni_mutables")

# candidates per edge: max_pool, avg_pool, skip (FactorizedReduce when stride 2), sep3, sep5, dil3, dil5
NONE = [False] * 7


def one(i):
    return [j == i for j in range(7)]


ARCHITECTURE = {
    "normal_n2_p0": one(3), "normal_n2_p1": one(0), "normal_n2_switch": [True, True],
    "normal_n3_p0": NONE, "normal_n3_p1": one(2), "normal_n3_p2": one(5), "normal_n3_switch": [False, True, True],
    "reduce_n2_p0": one(0), "reduce_n2_p1": one(1), "reduce_n2_switch": [True, True],
    "reduce_n3_p0": NONE, "reduce_n3_p1": one(3), "reduce_n3_p2": one(5), "reduce_n3_switch": [False, True, True],
}


def compute():
    torch.manual_seed(0)
    model = model_lib.CNN(input_size=8, in_channels=3, channels=4, n_classes=5, n_layers=4, n_nodes=2)
    mutables.apply_fixed_architecture(model, ARCHITECTURE)
    model.train()
    model.drop_path_prob(0.3)

    x = torch.randn(4, 3, 8, 8)
    y = torch.tensor([0, 1, 2, 3])
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    return {
        "logits": logits.detach(),
        "loss": loss.detach(),
        "stem.weight.grad": model.stem[0].weight.grad,
        "cell0.preproc1.grad": model.cells[0].preproc1.net[1].weight.grad,
        "cell3.preproc0.conv1.grad": model.cells[3].preproc0.conv1.weight.grad,
        "linear.weight.grad": model.linear.weight.grad,
    }


if __name__ == "__main__":
    compute()
