"""imgraph 0.1.4 (models/sage.py:180 `GraphSAGEWithEdgeFeatures.forward`): the proven finding of `inplacefix check`
(stop 53, fresh53b, end of stop). In layer i >= 1, x is `F.relu(x)` of the layer before (relu saves its output),
then `F.dropout(x, p=self.dropout, ...)`, which hands x itself back when p == 0 (the default, `dropout=0.0`) or in
eval mode; `x[src[j]] = src_features[j]` then writes relu's saved output. Raises in the library's own training
with its defaults (two layers, edge features). SAGEConv is a stand-in (mean of the source features
by target, through a Linear, plus a Linear of x, as torch_geometric's SAGEConv computes it); `init_layers` and `forward` are compiled alone from the shipped file onto a stand-in nn.Module, and
the run stops before the pooling (`return x`, line 196), differentiating x."""

import _shim  # noqa: F401
import linecache

import torch
import torch.nn as nn
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src


class SAGEConv(nn.Module):  # stand-in: torch_geometric's SAGEConv with mean aggregation
    def __init__(self, i, o, aggr="mean"):
        super().__init__()
        self.lin_l, self.lin_r = nn.Linear(i, o), nn.Linear(i, o, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros(x.size(0), x.size(1)).index_add(0, dst, x[src])
        cnt = torch.zeros(x.size(0)).index_add(0, dst, torch.ones(dst.numel())).clamp(min=1)
        return self.lin_l(agg / cnt.unsqueeze(1)) + self.lin_r(x)

PATH = src("imgraph/models/sage.py")
assert linecache.getline(PATH, 180).strip() == "x[src[j]] = src_features[j]"
assert linecache.getline(PATH, 196).strip() == "x = self.pool(x, batch)"


def run(dropout=0.0, control=False):
    replace = {196: "return x"}
    if control:
        replace[180] = "x = x.index_put((src[j],), src_features[j])"
    ns = compile_alone(PATH, {"GraphSAGEWithEdgeFeatures.init_layers", "GraphSAGEWithEdgeFeatures.forward"},
                       {"torch": torch, "nn": nn, "F": F, "SAGEConv": SAGEConv}, replace=replace)

    def go():
        torch.manual_seed(0)
        me = nn.Module()
        me.input_dim, me.edge_dim, me.hidden_dim, me.num_layers, me.dropout, me.aggr = 8, 3, 8, 2, dropout, "mean"
        ns["init_layers"](me)
        me.train()
        data = type("Data", (), {})()
        data.x = torch.randn(6, 8)  # input_dim == hidden_dim: `x + original_x` (:186) needs it
        data.edge_index = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        data.edge_attr = torch.randn(6, 3)
        data.batch = None
        ns["forward"](me, data).sum().backward()
    return go


FID = "imgraph/models/sage.py:180:IPF104"
attempt(FID, "path", "forward in training, defaults (dropout 0.0, two layers, input_dim == hidden_dim), edge features: raises",
        run())
attempt(FID, "control", "the same with :180 out of place (index_put): runs", run(control=True))
attempt(FID, "context", "dropout 0.5 in training (dropout hands back a new tensor): runs", run(dropout=0.5))
