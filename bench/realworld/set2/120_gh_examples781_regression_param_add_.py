# source: https://github.com/pytorch/examples/pull/781
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# examples/regression/main.py fits a polynomial with a bare nn.Linear and a hand-written SGD step
# `param.add_(-0.1 * param.grad)` outside torch.no_grad(); the parameters are leaves that require grad, so the
# update raises on the first iteration (follow-up of the word_language_model fix, same mistake in another example).
from itertools import count

import torch
import torch.nn.functional as F

POLY_DEGREE = 4


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)


def compute():
    torch.manual_seed(0)
    W_target = torch.randn(POLY_DEGREE, 1) * 5
    b_target = torch.randn(1) * 5

    def f(x):
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def get_batch(batch_size=32):
        """Builds a batch i.e. (x, f(x)) pair."""
        random = torch.randn(batch_size)
        x = make_features(random)
        y = f(x)
        return x, y

    # Define model
    fc = torch.nn.Linear(W_target.size(0), 1)
    grads = {}

    for batch_idx in count(1):
        # Get data
        batch_x, batch_y = get_batch()

        # Reset gradients
        fc.zero_grad()

        # Forward pass
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()

        # Backward pass
        output.backward()
        grads = {name: p.grad.clone() for name, p in fc.named_parameters()}

        # Apply gradients
        for param in fc.parameters():
            param.add_(-0.1 * param.grad)

        # Stop criterion (capped at 3 steps for the reduction)
        if loss < 1e-3 or batch_idx == 3:
            break
    return grads  # gradients of the last step (depend on the earlier updates)


if __name__ == "__main__":
    compute()
