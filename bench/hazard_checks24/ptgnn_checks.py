"""ptgnn 0.10.4 (ptgnn/neuralmodels/gnn/messagepassing/selfattmessagepassing.py:127
`MultiHeadSelfAttentionMessagePassing.forward`): the proven finding of `inplacefix check` (stop 57, fresh57, end of
stop). With a `target_reference` other than "all", the layer attends over `relevant_node_states =
node_states[reference_node_ids[...]]` and writes its result back into the caller's tensor: `node_states[ids] =
output_node_states` (:127). The check says the write spoils what `self.__selfatt_head_transforms` (a Linear, :92)
saved, `relevant_node_states`; that is an advanced-index copy (the ids are a 1-D long tensor), and node_states from
a Linear (which does not save its output) runs. But the tensor written is the previous layer's output:
ptgnn's MlpMessagePassingLayer with its defaults (LayerNorm, Linear, `dense_activation=nn.Tanh()`, `dropout_rate=0.0`:
nn.Dropout(0.0) hands its input back) returns tanh's output, which tanh saves; the write spoils it and backward of the
graph's states raises. Real (the library's own default stack; the check names another saver). The write on a fresh
copy runs. The class is compiled alone from the shipped file (AbstractMessagePassingLayer as nn.Module, scatter_sum
of torch_scatter as a torch stand-in); the previous layer is its state update as MlpMessagePassingLayer builds it.
The ids cover every node (in another order): the layer adds `output + node_states` (num_reference rows to num_nodes
rows), which broadcasts only then."""

import _shim  # noqa: F401
import linecache

import torch
from torch import nn
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("ptgnn/neuralmodels/gnn/messagepassing/selfattmessagepassing.py")
assert linecache.getline(PATH, 127).strip() == "node_states[reference_node_ids[self.__target_reference]] = output_node_states"


def scatter_sum(src, index, dim=-1, dim_size=None):
    size = int(index.max()) + 1 if dim_size is None else dim_size
    return torch.zeros(size, dtype=src.dtype).index_add_(0, index, src)


def run(shipped, previous="mlp"):
    replace = {} if shipped else {127: "node_states = node_states.clone(); node_states[reference_node_ids[self.__target_reference]] = output_node_states"}
    ns = compile_alone(PATH, {"MultiHeadSelfAttentionMessagePassing"},
                       {"torch": torch, "nn": nn, "scatter_sum": scatter_sum, "Dict": dict, "List": list,
                        "Tuple": tuple}, replace=replace,
                       bases={"MultiHeadSelfAttentionMessagePassing": ["nn.Module"]})

    def go():
        torch.manual_seed(0)
        d = 8
        layer = ns["MultiHeadSelfAttentionMessagePassing"](d, 4, 4, d, 16, 2, target_reference="ref")
        x = torch.randn(5, d, requires_grad=True)
        if previous == "mlp":  # MlpMessagePassingLayer's state update with its defaults
            update = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.Tanh(), nn.Dropout(p=0.0))
        else:
            update = nn.Linear(d, d)
        node_states = update(x)
        ids = {"ref": torch.tensor([2, 0, 1, 4, 3])}
        graph_idx = {"ref": torch.zeros(5, dtype=torch.long)}
        out = layer(node_states, [], torch.zeros(5, dtype=torch.long), ids, graph_idx, [])
        out.sum().backward()
        assert x.grad is not None
    return go


FID = "ptgnn/neuralmodels/gnn/messagepassing/selfattmessagepassing.py:127:IPF104"
attempt(FID, "path", "a graph of 5 nodes, the previous layer MlpMessagePassingLayer's default state update (tanh, "
        "dropout 0.0), target_reference 'ref' over all nodes: the write spoils tanh's saved output, backward raises",
        run(True))
attempt(FID, "control", "the write on a fresh copy: runs", run(False))
attempt(FID, "context", "node_states from a Linear (saves no output): runs (the Linear at :92 saved an index copy, "
        "not node_states)", run(True, previous="linear"))
