# Library module for case 3004 (original).
# usnistgov/alignn (then "jarvisdgl"), jarvisdgl/models/cgcnn.py (CGCNNConv, CGCNN), jarvisdgl/models/utils.py
# (RBFExpansion) and jarvisdgl/config.py (CGCNNConfig), read at the parent of commit 9dbfcd0 ("use torch.where
# instead of in-place mutation for hurdle", 2021-03-19). Written anew at small size (not copied): the RBF expansion of
# bond lengths, the Xie-Grossman convolution (edge features z_ij = [v_i, v_j, u_ij], sigmoid gate times softplus
# update, summed into the destination atom, batch norm, residual softplus), and the CGCNN readout whose `logscale`
# option applies `torch.exp` to the output and whose `hurdle` option (added half an hour before the fix, "prototype
# hurdle model for non-negative regression with hard zeros") zeroes the predictions of a Bernoulli gate with
# `out[p < 0.5] = 0.0` (the statement at fault: with logscale on, `out` is the result exp's backward saved), follow
# the source.
# Stand-ins: DGL is replaced by a minimal batched graph (SimpleGraph: source / destination index tensors, node and edge
# data, the graph each atom belongs to); DGL's `update_all(message, fn.sum)` by an index_add_ into a fresh zero tensor
# and its AvgPooling by a per-graph mean; the pydantic BaseSettings config by a dataclass.
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class CGCNNConfig:
    name: str = "cgcnn"
    conv_layers: int = 3
    atom_input_features: int = 1
    edge_features: int = 16
    node_features: int = 64
    fc_layers: int = 1
    fc_features: int = 64
    output_features: int = 1
    # if logscale is set, apply `exp` to final outputs to constrain predictions to be positive
    logscale: bool = False
    hurdle: bool = False


class SimpleGraph:
    """Batched graph: edges src -> dst, node / edge data dicts, graph id of each node."""

    def __init__(self, src, dst, node_graph, num_graphs, ndata=None, edata=None):
        self.src, self.dst = src, dst
        self.node_graph, self.num_graphs = node_graph, num_graphs
        self.ndata = dict(ndata or {})
        self.edata = dict(edata or {})

    def local_var(self):
        return SimpleGraph(self.src, self.dst, self.node_graph, self.num_graphs, self.ndata, self.edata)

    def num_nodes(self):
        return self.node_graph.numel()


class RBFExpansion(nn.Module):
    """Expand interatomic distances with radial basis functions."""

    def __init__(self, vmin=0, vmax=8, bins=40, lengthscale=None):
        super().__init__()
        self.vmin, self.vmax, self.bins = vmin, vmax, bins
        self.register_buffer("centers", torch.linspace(self.vmin, self.vmax, self.bins))
        if lengthscale is None:
            # SchNet-style: lengthscale relative to the granularity of the expansion
            self.lengthscale = np.diff(self.centers.numpy()).mean()
            self.gamma = 1 / self.lengthscale
        else:
            self.lengthscale = lengthscale
            self.gamma = 1 / (lengthscale ** 2)

    def forward(self, distance):
        return torch.exp(-self.gamma * (distance.unsqueeze(1) - self.centers) ** 2)


class AvgPooling(nn.Module):
    def forward(self, g, feat):
        summed = torch.zeros(g.num_graphs, feat.shape[1]).index_add(0, g.node_graph, feat)
        counts = torch.bincount(g.node_graph, minlength=g.num_graphs).clamp(min=1).unsqueeze(1)
        return summed / counts


class CGCNNConv(nn.Module):
    """Xie and Grossman graph convolution function (10.1103/PhysRevLett.120.145301)."""

    def __init__(self, node_features=64, edge_features=32):
        super().__init__()
        self.node_features = node_features
        self.edge_features = edge_features
        in_feats = 2 * self.node_features + self.edge_features
        # edge interaction model (W_f)
        self.edge_interaction = nn.Sequential(
            nn.Linear(in_feats, self.node_features), nn.BatchNorm1d(self.node_features), nn.Sigmoid())
        # edge attention model (W_s)
        self.edge_update = nn.Sequential(
            nn.Linear(in_feats, self.node_features), nn.BatchNorm1d(self.node_features), nn.Softplus())
        self.bn = nn.BatchNorm1d(self.node_features)

    def combine_edge_features(self, g):
        z = torch.cat((g.ndata["h"][g.src], g.ndata["h"][g.dst], g.edata["h"]), dim=1)
        return {"z": self.edge_interaction(z) * self.edge_update(z)}

    def forward(self, g, node_feats, edge_feats):
        g = g.local_var()
        g.ndata["h"] = node_feats
        g.edata["h"] = edge_feats
        # update_all(message_func=combine_edge_features, reduce_func=fn.sum("z", "h"))
        z = self.combine_edge_features(g)["z"]
        g.ndata["h"] = torch.zeros(g.num_nodes(), self.node_features).index_add(0, g.dst, z)
        h = self.bn(g.ndata.pop("h"))
        # residual connection plus nonlinearity
        return F.softplus(node_feats + h)


class CGCNN(nn.Module):
    """CGCNN implementation."""

    def __init__(self, config: CGCNNConfig = CGCNNConfig(name="cgcnn")):
        super().__init__()
        self.rbf = RBFExpansion(vmin=0, vmax=8.0, bins=config.edge_features)
        self.atom_embedding = nn.Linear(config.atom_input_features, config.node_features)
        self.conv_layers = nn.ModuleList(
            [CGCNNConv(config.node_features, config.edge_features) for _ in range(config.conv_layers)])
        self.readout = AvgPooling()
        self.fc = nn.Sequential(nn.Linear(config.node_features, config.fc_features), nn.Softplus())
        if config.hurdle:
            # latent Bernoulli variable model to zero out predictions in non-negative regression
            self.hurdle = True
            self.fc_hurdle = nn.Linear(config.fc_features, 1)
        else:
            self.hurdle = False
        self.fc_out = nn.Linear(config.fc_features, config.output_features)
        self.logscale = config.logscale
        if self.logscale:
            avg_gap = 0.7  # magic number -- average bandgap in dft_3d
            self.fc_out.bias.data = torch.tensor(np.log(avg_gap), dtype=torch.float)

    def forward(self, g):
        g = g.local_var()
        # fixed edge features: RBF-expanded bondlengths
        edge_features = self.rbf(g.edata.pop("bondlength"))
        # initial node features: atom feature network
        v = g.ndata.pop("atom_features")
        node_features = self.atom_embedding(v)
        for conv_layer in self.conv_layers:
            node_features = conv_layer(g, node_features, edge_features)
        # crystal-level readout
        features = self.readout(g, node_features)
        features = F.softplus(features)
        features = self.fc(features)
        features = F.softplus(features)

        out = self.fc_out(features)
        if self.logscale:
            out = torch.exp(out)
        if self.hurdle:
            logits = self.fc_hurdle(features)
            p = torch.sigmoid(logits)
            out[p < 0.5] = 0.0
        return torch.squeeze(out)
