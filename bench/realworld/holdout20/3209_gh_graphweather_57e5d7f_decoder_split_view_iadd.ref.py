# reference fix for 3209: graph_weather commit 57e5d7f in the library module
# (3209helpers_graphweather_decoder_fixed.py): `out = out + start_features`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
decoder_lib = importlib.import_module("3209helpers_graphweather_decoder_fixed")


def compute():
    torch.manual_seed(0)
    n_latlon, n_h3, n_var, hidden = 10, 6, 5, 16
    lat_lons = [(float(lat), float(lon)) for lat, lon in zip(range(-45, 45, 9), range(0, 360, 36))]
    decoder = decoder_lib.Decoder(lat_lons, num_h3=n_h3, input_dim=hidden, output_dim=n_var, output_edge_dim=hidden,
                                  hidden_dim_processor_node=hidden, hidden_dim_processor_edge=hidden,
                                  hidden_dim_decoder=hidden)
    encoder = torch.nn.Linear(n_latlon * n_var, n_h3 * hidden)
    params = list(decoder.parameters()) + list(encoder.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-3)
    feature_variance = torch.rand(n_var) + 0.5

    features = torch.randn(2, n_latlon, n_var)
    target = torch.randn(2, n_latlon, n_var)
    optimizer.zero_grad()
    processor_features = encoder(features.reshape(2, -1)).reshape(2 * n_h3, hidden)
    pred = decoder(processor_features, features)
    out = (pred - target) ** 2 / feature_variance
    loss = out.mean(-1).mean()
    loss.backward()
    result = {
        "loss": loss.detach(),
        "pred": pred.detach(),
        "encoder.weight.grad": encoder.weight.grad.clone(),
        "edge_encoder.grad": decoder.edge_encoder.model[0].weight.grad.clone(),
        "node_decoder.grad": decoder.node_decoder.model[-1].weight.grad.clone(),
    }
    optimizer.step()
    result["node_decoder.after_step"] = decoder.node_decoder.model[-1].weight.detach().clone()
    return result


if __name__ == "__main__":
    compute()
