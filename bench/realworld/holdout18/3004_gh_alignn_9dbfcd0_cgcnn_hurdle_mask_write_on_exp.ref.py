# reference fix for 3004: commit 9dbfcd0 in the library module (3004helpers_alignn_cgcnn_fixed.py):
# `out = torch.where(p < 0.5, torch.zeros_like(out), out)` in CGCNN.forward.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cgcnn = importlib.import_module("3004helpers_alignn_cgcnn_fixed")


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
