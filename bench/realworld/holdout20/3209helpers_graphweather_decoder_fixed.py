# Library module for case 3209 (reference): graph_weather decoder.py after commit 57e5d7f: the residual is added
# out of place, `out = out + start_features`. The rest as in 3209helpers_graphweather_decoder.py (which see for
# the stand-ins).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_blocks = importlib.import_module("3209helpers_graphweather_blocks")
MLP = _blocks.MLP
GraphProcessor = _blocks.GraphProcessor


class Decoder(torch.nn.Module):
    def __init__(self, lat_lons, num_h3=6, input_dim: int = 256, output_dim: int = 78, output_edge_dim: int = 256,
                 hidden_dim_processor_node=256, hidden_dim_processor_edge=256, hidden_layers_processor_node=2,
                 hidden_layers_processor_edge=2, mlp_norm_type="LayerNorm", hidden_dim_decoder=128,
                 hidden_layers_decoder=2):
        super().__init__()
        self.num_latlons = len(lat_lons)
        self.num_h3 = num_h3
        gen = torch.Generator().manual_seed(1234)
        edge_sources, edge_targets, distances = [], [], []
        for node_index in range(self.num_latlons):
            for h in torch.randperm(num_h3, generator=gen)[:3].tolist():
                d = float(torch.rand(1, generator=gen))
                distances.append([torch.sin(torch.tensor(d)).item(), torch.cos(torch.tensor(d)).item()])
                edge_sources.append(h)
                edge_targets.append(node_index + self.num_h3)
        self.edge_index = torch.tensor([edge_sources, edge_targets], dtype=torch.long)
        self.h3_to_lat_distances = torch.tensor(distances, dtype=torch.float)
        # Extra starting ones for appending to inputs, could 'learn' good starting points
        self.latlon_nodes = torch.zeros((len(lat_lons), input_dim), dtype=torch.float)
        self.edge_encoder = MLP(2, output_edge_dim, hidden_dim_processor_edge, 2, mlp_norm_type)
        self.graph_processor = GraphProcessor(
            mp_iterations=1,
            in_dim_node=input_dim,
            in_dim_edge=output_edge_dim,
            hidden_dim_node=hidden_dim_processor_node,
            hidden_dim_edge=hidden_dim_processor_edge,
            hidden_layers_node=hidden_layers_processor_node,
            hidden_layers_edge=hidden_layers_processor_edge,
            norm_type=mlp_norm_type,
        )
        self.node_decoder = MLP(input_dim, output_dim, hidden_dim_decoder, hidden_layers_decoder, None)

    def forward(self, processor_features: torch.Tensor, start_features: torch.Tensor) -> torch.Tensor:
        batch_size = start_features.shape[0]
        edge_attr = self.edge_encoder(self.h3_to_lat_distances)  # Update attributes based on distance
        edge_attr = edge_attr.repeat(batch_size, 1)  # einops.repeat "e f -> (repeat e) f"
        edge_index = torch.cat(
            [self.edge_index + i * torch.max(self.edge_index) + i for i in range(batch_size)],
            dim=1,
        )
        # Readd nodes to match graph node number
        features = processor_features.reshape(batch_size, -1, processor_features.shape[-1])
        features = torch.cat(
            [features, self.latlon_nodes.unsqueeze(0).expand(batch_size, -1, -1)], dim=1
        )
        features = features.reshape(-1, features.shape[-1])
        out, _ = self.graph_processor(features, edge_index, edge_attr)  # Message Passing
        # Remove the h3 nodes now, only want the latlon ones
        out = self.node_decoder(out)  # Decode to 78 from 256
        out = out.reshape(batch_size, -1, out.shape[-1])
        _, out = torch.split(out, [self.num_h3, self.num_latlons], dim=1)
        out = out + start_features # residual connection
        return out
