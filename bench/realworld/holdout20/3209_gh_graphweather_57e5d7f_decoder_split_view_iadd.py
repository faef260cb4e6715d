# source: https://github.com/openclimatefix/graph_weather/commit/57e5d7f1e7fd155230f7c8dd5512dd60ae61086f
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# graph_weather (Open Climate Fix's graph-network weather forecaster, after Keisler 2022): the Decoder maps the
# processed icosahedral (h3) node features back to the lat/lon grid by message passing, decodes every node, keeps the
# lat/lon nodes with `_, out = torch.split(out, [self.num_h3, self.num_latlons], dim=1)` and adds the input as a
# residual in place, `out += start_features`. `out` is an output of split, which returns several views, so in
# training the statement raises "Output 1 of SplitWithSizes is a view and is being modified inplace. This
# view is the output of a function that returns multiple views. Such functions do not allow the output views to be
# modified inplace." Commit 57e5d7f ("Fix loss", by the maintainer) writes `out = out + start_features` and adds a
# test that runs the forecaster and the loss backward.
# The library modules are 3209helpers_graphweather_decoder.py (ref: ..._fixed.py) and
# 3209helpers_graphweather_blocks.py; their headers name the stand-ins (no h3, einops or PyG here).
# Stand-ins here: the encoder and processor are one Linear map from the lat/lon features to the h3 nodes' features
# (the decoder's input, `processor_features` of shape [B * num_h3, F]); 10 lat/lon points, 6 h3 nodes, 5 variables,
# 16 hidden features; the loss is the commit's NormalizedMSELoss form without latitude weights (squared error over
# the feature variance, mean over variables, then mean); one backward and one Adam step.
# Returned: the loss, the forecast, gradients of the stand-in encoder, the edge encoder and the node decoder, and the
# node decoder's last weight after the step.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
decoder_lib = importlib.import_module("3209helpers_graphweather_decoder")


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
