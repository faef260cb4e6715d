# source: https://github.com/usnistgov/alignn/commit/9dbfcd04fb9d9376d64e0fe4f890dba41c7acdc2
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# ALIGNN (then "jarvisdgl": graph networks for materials property prediction), jarvisdgl/models/cgcnn.py: commit
# b4df113 ("prototype hurdle model for non-negative regression with hard zeros") added a `hurdle` option to CGCNN that
# zeroes the predicted value where a Bernoulli gate says "zero" with `out[p < 0.5] = 0.0`. With the model's
# `logscale` option (positive outputs through `torch.exp`, as set for band gaps, the target the hurdle model is for),
# `out` is exp's result, which exp's backward saved, so training raises "one of the variables needed for gradient
# computation has been modified by an inplace operation ... output 0 of ExpBackward0". Half an hour later, commit
# 9dbfcd0 ("use torch.where instead of in-place mutation for hurdle") writes
# `out = torch.where(p < 0.5, torch.zeros_like(out), out)`. The commit message names no error text; the case runs the
# configuration (hurdle and logscale on) in which the in-place write fails.
# The library module is 3004helpers_alignn_cgcnn.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a batch of three small random "crystals" (3, 4 and 2 atoms, fully connected directed edges with
# random bond lengths in [1, 4]), one scalar atom feature, the model at width 16 with 2 convolution layers, targets
# that are zero for one crystal, a mean-squared loss and one backward pass (seed 27: the gate zeroes two predictions).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cgcnn = importlib.import_module("3004helpers_alignn_cgcnn")


def make_batch():
    sizes = [3, 4, 2]
    src, dst, node_graph, offset = [], [], [], 0
    for gi, n in enumerate(sizes):
        for i in range(n):
            node_graph.append(gi)
            for j in range(n):
                if i != j:
                    src.append(offset + i)
                    dst.append(offset + j)
        offset += n
    src, dst = torch.tensor(src), torch.tensor(dst)
    atom_features = torch.randn(offset, 1)
    bondlength = 1.0 + 3.0 * torch.rand(src.numel())
    return cgcnn.SimpleGraph(src, dst, torch.tensor(node_graph), len(sizes),
                             ndata={"atom_features": atom_features}, edata={"bondlength": bondlength})


def compute():
    torch.manual_seed(27)  # a draw in which the gate zeroes two of the three predictions
    config = cgcnn.CGCNNConfig(conv_layers=2, edge_features=8, node_features=16, fc_features=16,
                               logscale=True, hurdle=True)
    model = cgcnn.CGCNN(config)
    g = make_batch()
    target = torch.tensor([0.0, 1.3, 0.4])

    out = model(g)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    return {
        "out": out.detach(),
        "fc_out.weight.grad": model.fc_out.weight.grad,
        "fc_out.bias.grad": model.fc_out.bias.grad,
        "fc.0.weight.grad": model.fc[0].weight.grad,
        "atom_embedding.weight.grad": model.atom_embedding.weight.grad,
        "conv0.edge_update.0.weight.grad": model.conv_layers[0].edge_update[0].weight.grad,
    }


if __name__ == "__main__":
    compute()
