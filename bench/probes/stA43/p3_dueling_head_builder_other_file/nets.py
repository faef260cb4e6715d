"""The project's network builders (another file than the model's)."""
import torch.nn as nn


def build_mlp(input_dim, output_dim, hidden_units=(32, 32), hidden_activation=nn.ReLU):
    layers = []
    units = input_dim
    for next_units in hidden_units:
        layers.append(nn.Linear(units, next_units))
        layers.append(hidden_activation())
        units = next_units
    layers.append(nn.Linear(units, output_dim))
    return nn.Sequential(*layers)
