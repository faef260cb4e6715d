# reference fix for 2807: commit 7b23cd5 in the test (this program):
# `with torch.no_grad(): norm_act.biases[:] = torch.randn(norm_act.biases.shape)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
nn_ = importlib.import_module("2807helpers_e3nn_normact")


def test_norm_activation(float_tolerance=1e-5, do_bias=True, nonlin=torch.tanh):
    irreps_in = nn_.o3.Irreps("4x0e + 5x1o")
    N_batch = 3
    in_features = torch.randn(N_batch, irreps_in.dim)
    # Set some features to zero to test avoiding divide by zero
    in_features[0, 0] = 0  # batch 0, scalar 0
    in_features[1, 4:4 + 3] = 0  # batch 0, vector 1

    norm_act = nn_.NormActivation(irreps_in=irreps_in, scalar_nonlinearity=nonlin, bias=do_bias)

    if do_bias:
        assert len(list(norm_act.parameters())) == 1
        with torch.no_grad():
            norm_act.biases[:] = torch.randn(norm_act.biases.shape)
    else:
        assert len(list(norm_act.parameters())) == 0

    out = norm_act(in_features)

    if do_bias:
        assert out.requires_grad

    for batch in range(N_batch):
        # scalars should be the nonlin of their abs with the same sign.
        scalar_in = in_features[batch, :4]
        true_nonlin_arg = scalar_in.abs() + norm_act.biases[:4] if do_bias else scalar_in.abs()
        assert torch.allclose(torch.sign(scalar_in) * nonlin(true_nonlin_arg), out[batch, :4], atol=float_tolerance)
        # vectors: check norms
        vector_in = in_features[batch, 4:].reshape(5, 3)
        in_norms = vector_in.norm(dim=-1)
        out_norms = out[batch, 4:].reshape(5, 3).norm(dim=-1)
        mask = (in_norms > 0) & (out_norms > 0)
        true_nonlin_arg = in_norms + norm_act.biases[4:] if do_bias else in_norms
        assert torch.allclose(nonlin(true_nonlin_arg)[mask].abs(), out_norms[mask], atol=float_tolerance)
    return norm_act, out


def compute():
    torch.manual_seed(0)
    norm_act, out = test_norm_activation()
    return {
        "out": out.detach(),
        "biases": norm_act.biases.detach(),
    }


if __name__ == "__main__":
    compute()
