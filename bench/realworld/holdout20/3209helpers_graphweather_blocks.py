# Library module for case 3209 (shared: the fix does not touch it): openclimatefix/graph_weather,
# graph_weather/models/layers/graph_net_block.py at the parent of commit 57e5d7f. MLP (Linear/ReLU layers, a final
# Linear, then an optional norm layer looked up on torch.nn by name) follows the source.
# Stand-in: GraphProcessor (PyTorch Geometric MessagePassing / MetaLayer: edge MLP on [x_src, x_dst, edge_attr],
# messages summed at the targets, node MLP on [x, aggregate], residual updates, `mp_iterations` rounds) is written
# with torch.index_add_ on a fresh zeros tensor (torch_geometric is not installed here); it returns (x, edge_attr)
# as the source's does.
import torch
from torch import nn


class MLP(nn.Module):
    # MLP with LayerNorm
    def __init__(self, in_dim: int, out_dim: int = 128, hidden_dim: int = 128, hidden_layers: int = 2,
                 norm_type: str = "LayerNorm"):
        super(MLP, self).__init__()
        layers = [nn.Linear(in_dim, hidden_dim), nn.ReLU()]
        for _ in range(hidden_layers - 1):
            layers += [nn.Linear(hidden_dim, hidden_dim), nn.ReLU()]
        layers.append(nn.Linear(hidden_dim, out_dim))
        if norm_type is not None:
            assert norm_type in ["LayerNorm", "GraphNorm", "InstanceNorm", "BatchNorm", "MessageNorm"]
            norm_layer = getattr(nn, norm_type)
            layers.append(norm_layer(out_dim))
        self.model = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


class GraphProcessor(nn.Module):
    def __init__(self, mp_iterations=15, in_dim_node=128, in_dim_edge=128, hidden_dim_node=128, hidden_dim_edge=128,
                 hidden_layers_node=2, hidden_layers_edge=2, norm_type="LayerNorm"):
        super().__init__()
        self.edge_mlps = nn.ModuleList([
            MLP(2 * in_dim_node + in_dim_edge, in_dim_edge, hidden_dim_edge, hidden_layers_edge, norm_type)
            for _ in range(mp_iterations)])
        self.node_mlps = nn.ModuleList([
            MLP(in_dim_node + in_dim_edge, in_dim_node, hidden_dim_node, hidden_layers_node, norm_type)
            for _ in range(mp_iterations)])

    def forward(self, x, edge_index, edge_attr):
        src, dst = edge_index
        for edge_mlp, node_mlp in zip(self.edge_mlps, self.node_mlps):
            edge_attr = edge_attr + edge_mlp(torch.cat([x[src], x[dst], edge_attr], dim=-1))
            agg = torch.zeros(x.shape[0], edge_attr.shape[1], dtype=x.dtype).index_add(0, dst, edge_attr)
            x = x + node_mlp(torch.cat([x, agg], dim=-1))
        return x, edge_attr
