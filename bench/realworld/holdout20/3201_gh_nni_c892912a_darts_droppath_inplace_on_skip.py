# source: https://github.com/microsoft/nni/commit/c892912a59f2e850c48fb2f4aa20ea411b189d6b (squashed into PR #1776, 6c1fe5c)
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# NNI's DARTS example, retraining an exported architecture (retrain.py: apply_fixed_architecture, then
# `model.drop_path_prob(args.drop_path_prob * epoch / args.epochs)` and a training step). Every Node applies
# `self.drop_path = ops.DropPath_()` to each chosen op's output, and DropPath_.forward scales that output in place:
# `x.div_(keep_prob).mul_(mask)`. For the skip connection (nn.Identity, stride 1) the "output" is the previous node's
# tensor itself; here the normal cell's preprocessed input s1 (tensors[1]) feeds a 3x3 max pool in node 2 (MaxPool2d
# saves its input for backward) and the skip connection in node 3, so node 3's drop path rewrites the tensor the pool
# saved and the training step's backward raises "one of the variables needed for gradient computation has been
# modified by an inplace operation" (MaxPool2DWithIndicesBackward0). Commit c892912a ("fix droppath inplace error")
# replaces DropPath_ by an out-of-place DropPath (`return x / keep_prob * mask`) in ops.py and model.py.
# The library modules are 3201helpers_nni_darts_model.py / _ops.py (ref: ..._fixed.py) and 3201helpers_nni_mutables.py;
# their headers name their stand-ins.
# Stand-ins here: the exported architecture (a dict, not the search's JSON file) is one of the reducer's choosing that
# puts a pool and a skip connection on the same preprocessed input of a normal cell (any such pair fails the same way;
# the reduction cells use pools / convolutions only); 4 cells of 4 channels with 2 nodes each on 8x8 inputs;
# drop_path_prob 0.3 (the schedule's value at some epoch); one cross-entropy step's backward, no optimizer step.
# Returned: the logits, the loss, and the gradients of the stem, the first cell's preprocessing and the classifier.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
model_lib = importlib.import_module("3201helpers_nni_darts_model")
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
