# reference fix for 426: the hidden state is detached after every batch (truncated BPTT) and backward no longer retains the graph, so no backward reaches a graph whose weights optimizer.step() has changed. Gradients differ from an untruncated history by design.
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
            h0, c0 = h0.detach(), c0.detach()
            loss = loss_fn(output.reshape(-1, embedding_dim), batch[1])
            loss.backward()
            grads = {n: p.grad.clone() for n, p in lstm.named_parameters()}
            optimizer.step()
    return grads


if __name__ == "__main__":
    compute()
