# source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/57
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyTorch Geometric Temporal STConv.forward() (the release the issue was filed against) writes the graph convolution
# of every (batch, time) slice back into the temporal-convolution output it reads from:
# `T = self._temporal_conv1(X); T[b][t] = self._graph_conv(T[b][t], edge_index, edge_weight)`. Each write bumps T's
# version while ChebConv's linear layers (and the ReLU inside TemporalConv) saved earlier slices -> "output 0 of
# SelectBackward ... is at version 60; expected version 59". Fixed in the library: read from T_0 and write into a
# fresh `T = torch.zeros_like(T_0)`. torch_geometric's ChebConv is replaced by a dense stand-in with the same call.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ChebConv(nn.Module):
    """Dense stand-in for torch_geometric.nn.ChebConv (sym normalisation, lambda_max = 2)."""

    def __init__(self, in_channels, out_channels, K, normalization="sym", bias=True):
        super().__init__()
        self.lins = nn.ModuleList([nn.Linear(in_channels, out_channels, bias=False) for _ in range(K)])
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None

    def forward(self, x, edge_index, edge_weight=None):
        n = x.size(0)
        w = edge_weight if edge_weight is not None else torch.ones(edge_index.size(1))
        A = torch.zeros(n, n).index_put((edge_index[0], edge_index[1]), w, accumulate=True)
        deg = A.sum(1).clamp(min=1e-12)
        L_hat = -(deg.pow(-0.5)[:, None] * A * deg.pow(-0.5)[None, :])  # L - I with lambda_max = 2
        Tx_0 = x
        out = self.lins[0](Tx_0)
        if len(self.lins) > 1:
            Tx_1 = L_hat @ x
            out = out + self.lins[1](Tx_1)
            for lin in self.lins[2:]:
                Tx_2 = 2. * (L_hat @ Tx_1) - Tx_0
                out = out + lin(Tx_2)
                Tx_0, Tx_1 = Tx_1, Tx_2
        if self.bias is not None:
            out = out + self.bias
        return out


class TemporalConv(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3):
        super(TemporalConv, self).__init__()
        self.conv_1 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))
        self.conv_2 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))
        self.conv_3 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))

    def forward(self, X):
        X = X.permute(0, 3, 2, 1)
        P = self.conv_1(X)
        Q = torch.sigmoid(self.conv_2(X))
        PQ = P * Q
        H = F.relu(PQ + self.conv_3(X))
        H = H.permute(0, 3, 2, 1)
        return H


class STConv(nn.Module):
    def __init__(self, num_nodes, in_channels, hidden_channels, out_channels, kernel_size, K,
                 normalization="sym", bias=True):
        super(STConv, self).__init__()
        self.num_nodes = num_nodes
        self.in_channels = in_channels
        self.hidden_channels = hidden_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.K = K
        self.normalization = normalization
        self.bias = bias
        self._temporal_conv1 = TemporalConv(in_channels=in_channels, out_channels=hidden_channels,
                                            kernel_size=kernel_size)
        self._graph_conv = ChebConv(in_channels=hidden_channels, out_channels=hidden_channels, K=K,
                                    normalization=normalization, bias=bias)
        self._temporal_conv2 = TemporalConv(in_channels=hidden_channels, out_channels=out_channels,
                                            kernel_size=kernel_size)
        self._batch_norm = nn.BatchNorm2d(num_nodes)

    def forward(self, X, edge_index, edge_weight=None):
        T = self._temporal_conv1(X)
        for b in range(T.size(0)):
            for t in range(T.size(1)):
                T[b][t] = self._graph_conv(T[b][t], edge_index, edge_weight)

        T = F.relu(T)
        T = self._temporal_conv2(T)
        T = T.permute(0, 2, 1, 3)
        T = self._batch_norm(T)
        T = T.permute(0, 2, 1, 3)
        return T


class STGCN(nn.Module):
    """The reporter's model: two stacked STConv blocks and a linear read-out."""

    def __init__(self, num_nodes, in_channels, hidden, out_channels):
        super().__init__()
        self.recurrent1 = STConv(num_nodes, in_channels, hidden, hidden, kernel_size=2, K=2)
        self.recurrent2 = STConv(num_nodes, hidden, hidden, hidden, kernel_size=2, K=2)
        self.linear = nn.Linear(hidden, out_channels)

    def forward(self, x, edge_indices, edge_weights):
        h1 = self.recurrent1(x, edge_indices, edge_weights)
        h2 = self.recurrent2(h1, edge_indices, edge_weights)
        return self.linear(F.relu(h2))


def compute():
    torch.manual_seed(0)
    num_nodes = 6
    src = torch.arange(num_nodes)
    edge_index = torch.cat([torch.stack([src, (src + 1) % num_nodes]), torch.stack([(src + 1) % num_nodes, src])], 1)
    edge_weight = torch.rand(edge_index.size(1))
    model = STGCN(num_nodes, in_channels=2, hidden=8, out_channels=1)
    x = torch.randn(2, 6, num_nodes, 2)  # (batch, time steps, nodes, features)
    y = torch.randn(2, 2, num_nodes, 1)
    out = model(x, edge_index, edge_weight)
    loss = F.mse_loss(out, y)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
