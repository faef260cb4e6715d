# source: https://github.com/source-separation/tutorial/issues/18
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# "Pytorch Leaf Variable Handling Update": the tutorial's gradient-descent chapter (book/training/gradient_descent.ipynb,
# as first committed in 119f1d8) draws the loss landscape of a one-unit nn.Linear by writing each candidate slope and
# bias straight into the trainable parameters, `line.layer.weight[0, 0] = m_hat; line.layer.bias[0] = b_hat`, and then
# sets the best pair the same way -> "a view of a leaf Variable that requires grad is being used in an in-place
# operation." The thread's fix (comment, merged as #26, commit 9208681 "updating pytorch to zero_grad [no_grad] for
# leaf variables"): put those writes in a `with torch.no_grad():` block, as later cells of the same notebook already did.
# Harness: the notebook cells 8/16/18/20 + the gradient cell, with numpy replaced by torch (no numpy in the bench env),
# a 7x7 grid instead of 100x100, no plots; the loss value is stored with .item(). Returns the landscape, the chosen
# parameters and their gradients.
import torch
from torch import nn


class Line(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(1, 1)

    def forward(self, x):
        y = self.layer(x)
        return y


def compute():
    torch.manual_seed(0)
    to_tensor = lambda x: x.reshape(-1, 1).float()
    line = Line()

    m = torch.randn(()).item()
    b = torch.randn(()).item()
    x = torch.linspace(-10, 10, 100)
    noise = torch.randn(100) * 0.1
    y = m * x + b + noise

    possible_m = torch.linspace(-2, 2, 7)
    possible_b = torch.linspace(-2, 2, 7)
    loss = torch.empty((possible_m.shape[0], possible_b.shape[0]))

    for i, m_hat in enumerate(possible_m):
        for j, b_hat in enumerate(possible_b):
            line.layer.weight[0, 0] = m_hat
            line.layer.bias[0] = b_hat
            y_hat = line(to_tensor(x))
            _loss = (y_hat - to_tensor(y)).abs().mean()
            loss[i, j] = _loss.item()

    idx = divmod(int(torch.argmin(loss)), loss.shape[1])
    m_hat = possible_m[idx[0]]
    b_hat = possible_b[idx[1]]

    line.layer.weight[0, 0] = m_hat
    line.layer.bias[0] = b_hat

    line.zero_grad()
    y_hat = line(to_tensor(x))
    _loss = (y_hat - to_tensor(y)).abs().mean()
    _loss.backward()
    return {"loss_landscape": loss.clone(), "weight": line.layer.weight.detach().clone(),
            "bias": line.layer.bias.detach().clone(), "weight.grad": line.layer.weight.grad.clone(),
            "bias.grad": line.layer.bias.grad.clone()}


if __name__ == "__main__":
    compute()
