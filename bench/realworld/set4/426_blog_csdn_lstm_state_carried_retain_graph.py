# source: https://blog.youkuaiyun.com/windhawk_fly/article/details/143405685
# pattern: other
# codemod_fixable: no
# error: A
# ref_semantics: differs
# Blog post (a CSDN mirror; the address above is the stored copy that was read): an LSTM language-style model trained with the hidden
# state (h0, c0) created once per epoch and then carried from batch to batch: `output, (h0, c0) = lstm(batch[0],
# h0, c0)`. The first error was "Trying to backward through the graph a second time"; adding
# `loss.backward(retain_graph=True)` turned it into "[torch.FloatTensor [128, 6]] is at version 2; expected version
# 1": the new loss backpropagates through the previous batches' graphs, which saved the LSTM weights that
# optimizer.step() has since updated in place. The post traces it to the carried hidden variables; the fix is to
# cut the history per batch (h0, c0 detached, no retain_graph), which changes the gradients (truncated BPTT), hence
# `differs` and not codemod-fixable: no single in-place statement is wrong, the graph is stale.
# The post does not show the body of `lstm(x, h0, c0)`; a from-scratch single-layer LSTM with the same call
# signature stands in, with random data and the post's training loop (optimizer Adam, MSE on
# output.reshape(-1, embedding_dim)).
import torch
import torch.nn as nn


class LSTM(nn.Module):
    """Stand-in for the post's lstm(x, h0, c0): (seq, batch, embedding_dim) -> same, returns (output, (h, c))."""

    def __init__(self, embedding_dim, hidden_dim, num_layers=1):
        super().__init__()
        self.W = nn.Parameter(torch.randn(4 * hidden_dim, embedding_dim) * 0.1)
        self.U = nn.Parameter(torch.randn(4 * hidden_dim, hidden_dim) * 0.1)
        self.b = nn.Parameter(torch.zeros(4 * hidden_dim))
        self.out = nn.Linear(hidden_dim, embedding_dim)

    def forward(self, x, h0, c0):
        h, c = h0[0], c0[0]
        outputs = []
        for t in range(x.shape[0]):
            gates = x[t] @ self.W.t() + h @ self.U.t() + self.b
            i, f, g, o = gates.chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(self.out(h))
        return torch.stack(outputs), (h.unsqueeze(0), c.unsqueeze(0))


def compute():
    torch.manual_seed(0)
    num_layers, batch_size, hidden_dim, embedding_dim, seq_len = 1, 4, 8, 6, 5
    lstm = LSTM(embedding_dim, hidden_dim, num_layers)
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.Adam(lstm.parameters(), lr=1e-2)
    data_loader = [(torch.randn(seq_len, batch_size, embedding_dim), torch.randn(seq_len * batch_size, embedding_dim))
                   for _ in range(3)]
    grads = {}
    for epoch in range(1):
        h0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
        c0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
        for batch in data_loader:
            optimizer.zero_grad()
            output, (h0, c0) = lstm(batch[0], h0, c0)
            loss = loss_fn(output.reshape(-1, embedding_dim), batch[1])
            loss.backward(retain_graph=True)
            grads = {n: p.grad.clone() for n, p in lstm.named_parameters()}
            optimizer.step()
    return grads


if __name__ == "__main__":
    compute()
