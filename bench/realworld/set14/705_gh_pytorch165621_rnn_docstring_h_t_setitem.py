# source: https://github.com/pytorch/pytorch/issues/165621
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# The "Efficient implementation equivalent to the following" example in the torch.nn.RNN docstring, as reported:
# each layer's new hidden state is written into a shared buffer, `h_t[layer] = torch.tanh(... h_t_minus_1[layer] ...)`,
# while the layer above has already read `input_t = h_t[layer - 1]` (a view of that buffer, saved by the matmul), so
# `loss.backward()` fails ("modified by an inplace operation"). The fix proposed in the issue body (and the linked
# PRs #173888 / #184817): build each time step's hidden states in a fresh list, `h_t.append(torch.tanh(...))`, and
# stack at the end. The harness is the issue's own: input (5, 3, 10), h0 (2, 3, 20), a CrossEntropyLoss against a
# ones-like target (here MSE to keep the target a float tensor of the same shape).
import torch
import torch.nn as nn

# Efficient implementation equivalent to the following with bidirectional=False
rnn = None
params = None


def forward(x, hx=None, batch_first=False):
    if batch_first:
        x = x.transpose(0, 1)
    seq_len, batch_size, _ = x.size()
    if hx is None:
        hx = torch.zeros(rnn.num_layers, batch_size, rnn.hidden_size)
    h_t_minus_1 = hx.clone()
    h_t = hx.clone()
    output = []
    for t in range(seq_len):
        for layer in range(rnn.num_layers):
            input_t = x[t] if layer == 0 else h_t[layer - 1]
            h_t[layer] = torch.tanh(
                input_t @ params[f"weight_ih_l{layer}"].T
                + h_t_minus_1[layer] @ params[f"weight_hh_l{layer}"].T
                + params[f"bias_hh_l{layer}"]
                + params[f"bias_ih_l{layer}"]
            )
        output.append(h_t[-1].clone())
        h_t_minus_1 = h_t.clone()
    output = torch.stack(output)
    if batch_first:
        output = output.transpose(0, 1)
    return output, h_t


def compute():
    global rnn, params
    torch.manual_seed(0)
    rnn = nn.RNN(10, 20, 2)
    params = dict(rnn.named_parameters())
    input = torch.randn(5, 3, 10, requires_grad=True)
    h0 = torch.randn(2, 3, 20, requires_grad=True)
    output, hn = forward(input, h0)

    target = torch.ones_like(output)
    loss = nn.functional.mse_loss(output, target) + hn.pow(2).mean()
    loss.backward()
    out = {n: p.grad for n, p in rnn.named_parameters()}
    out["input.grad"] = input.grad
    out["h0.grad"] = h0.grad
    return out


if __name__ == "__main__":
    compute()
