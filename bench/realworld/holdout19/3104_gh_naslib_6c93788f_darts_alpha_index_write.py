# source: https://github.com/automl/NASLib/commit/6c93788f145187fe8cda446531f5b9f98e4ab48b (the same fix again as 3b941a27)
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# NASLib (a neural-architecture-search library), DARTS one-shot search: DARTSOptimizer.add_alphas gives every edge of
# the cell an architecture weight `torch.nn.Parameter(1e-3 * torch.randn(...))`; after the search,
# get_final_architecture clones the graph and calls prepare_discretization, which runs _truncate_input_edges on every
# node: to keep the two strongest input edges it first rules out the Zero op with `data.alpha[1] = -float("Inf")`.
# The clone's alpha is a Parameter (a leaf that requires grad) and the indexed write is an in-place operation on a view
# of it with grad mode on, so discretization raises "a view of a leaf Variable that requires grad is being used in an
# in-place operation" (newer PyTorch; the second commit of the fix is titled "get darts graph truncate edges fn working
# with torch 1.9"). Commit 6c93788f ("assignment to alpha by index needs to be done on its data member or using
# no_grad") writes `data.alpha.data[1] = -float("inf")`.
# The library module is 3104helpers_naslib_darts.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: one cell with three input nodes of 4 channels on 5x5 maps feeding one intermediate node, one search
# step's backward on the mixed-op cell (a mean-square output loss; no optimizer step), then discretization.
# Returned: the search gradients, which input edges were kept, the chosen primitive per kept edge, the final
# architecture's output, and the discretized alphas without the -inf Zero entry (plus a flag that it is -inf).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
darts = importlib.import_module("3104helpers_naslib_darts")


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
