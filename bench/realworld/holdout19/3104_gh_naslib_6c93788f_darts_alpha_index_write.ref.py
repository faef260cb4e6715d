# reference fix for 3104: NASLib commit 6c93788f in the library module (3104helpers_naslib_darts_fixed.py):
# `data.alpha.data[1] = -float("inf")` in _truncate_input_edges.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
darts = importlib.import_module("3104helpers_naslib_darts_fixed")


def compute():
    torch.manual_seed(0)
    search_space = darts.SmallCell(C=4)
    optimizer = darts.DARTSOptimizer()
    optimizer.adapt_search_space(search_space)
    graph = optimizer.graph

    inputs = [torch.randn(2, 4, 5, 5) for _ in range(3)]
    out = graph(inputs)
    loss = out.pow(2).mean()
    loss.backward()

    final = optimizer.get_final_architecture()
    final_out = final(inputs)

    keys = sorted(final.edges)
    kept = torch.tensor([0.0 if final.edges[k].is_deleted() else 1.0 for k in keys])
    chosen = []
    final_alphas = []
    zero_is_inf = []
    for k in keys:
        a = final.edges[k].alpha.detach()
        final_alphas.append(torch.cat([a[:1], a[2:]]))
        zero_is_inf.append(float(torch.isinf(a[1])))
        chosen.append(float(int(torch.argmax(a))))
    return {
        "loss": loss.detach(),
        "alpha.grad": torch.stack([graph.edges[k].alpha.grad for k in keys]),
        "conv.weight.grad": torch.stack([graph.edges[k].op.primitives[3].conv.weight.grad for k in keys]),
        "kept_edges": kept,
        "chosen_ops": torch.tensor(chosen),
        "final_alphas_without_zero": torch.stack(final_alphas),
        "zero_alpha_is_inf": torch.tensor(zero_is_inf),
        "final_out": final_out.detach(),
    }


if __name__ == "__main__":
    compute()
