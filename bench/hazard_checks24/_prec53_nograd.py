"""A sibling module for prec53_probes.py (no-grad-helper-unseen): a helper that runs the model under no_grad,
imported by the probe, and its control without no_grad."""

import torch


def embed(model, x):
    with torch.no_grad():
        out = model(x)
    return out


def embed_with_grad(model, x):
    out = model(x)
    return out
