# reference fix for 807: PR #4218, the stacks' outputs stored with unsqueeze + cat and averaged (no in-place sum).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Graph:
    """stand-in for the parts of dgl.DGLGraph the model uses"""

    def __init__(self, src, dst, num_nodes):
        self.src, self.dst, self.n = src, dst, num_nodes
        self.ndata = {}

    def in_degrees(self):
        return torch.zeros(self.n, dtype=torch.long).index_add(0, self.dst, torch.ones_like(self.dst))

    def local_scope(self):
        g = self

        class _Scope:
            def __enter__(self):
                return g

            def __exit__(self, *a):
                g.ndata = {}

        return _Scope()

    def update_all_copy_u_sum(self, name):
        h = self.ndata[name]
        self.ndata[name] = torch.zeros_like(h).index_add(0, self.dst, h[self.src])


def glorot(tensor):
    if tensor is not None:
        stdv = math.sqrt(6.0 / (tensor.size(-2) + tensor.size(-1)))
        tensor.data.uniform_(-stdv, stdv)


def zeros(tensor):
    if tensor is not None:
        tensor.data.fill_(0)


class ARMAConv(nn.Module):
    def __init__(self, in_dim, out_dim, num_stacks, num_layers, activation=None, dropout=0.0, bias=True):
        super(ARMAConv, self).__init__()
        self.in_dim = in_dim
        self.out_dim = out_dim
        self.K = num_stacks
        self.T = num_layers
        self.activation = activation
        self.dropout = nn.Dropout(p=dropout)
        # init weight
        self.w_0 = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        # deeper weight
        self.w = nn.ModuleDict({str(k): nn.Linear(out_dim, out_dim, bias=False) for k in range(self.K)})
        # v
        self.v = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        # bias
        if bias:
            self.bias = nn.Parameter(torch.Tensor(self.K, self.T, 1, self.out_dim))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        for k in range(self.K):
            glorot(self.w_0[str(k)].weight)
            glorot(self.w[str(k)].weight)
            glorot(self.v[str(k)].weight)
        zeros(self.bias)

    def forward(self, g, feats):
        with g.local_scope():
            init_feats = feats
            # assume that the graphs are undirected and graph.in_degrees() is the same as graph.out_degrees()
            degs = g.in_degrees().float().clamp(min=1)
            norm = torch.pow(degs, -0.5).to(feats.device).unsqueeze(1)
            output = None

            for k in range(self.K):
                feats = init_feats
                for t in range(self.T):
                    feats = feats * norm
                    g.ndata['h'] = feats
                    g.update_all_copy_u_sum('h')
                    feats = g.ndata.pop('h')
                    feats = feats * norm

                    if t == 0:
                        feats = self.w_0[str(k)](feats)
                    else:
                        feats = self.w[str(k)](feats)

                    feats += self.dropout(self.v[str(k)](init_feats))
                    feats += self.v[str(k)](self.dropout(init_feats))

                    if self.bias is not None:
                        feats += self.bias[k][t]

                    if self.activation is not None:
                        feats = self.activation(feats)

                if k == 0:
                    output = feats.unsqueeze(0)
                else:
                    output = torch.cat([output, feats.unsqueeze(0)], dim=0)

            return output.mean(dim=0)


class ARMA4NC(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, num_stacks, num_layers, activation=None, dropout=0.0):
        super(ARMA4NC, self).__init__()
        self.conv1 = ARMAConv(in_dim=in_dim, out_dim=hid_dim, num_stacks=num_stacks, num_layers=num_layers,
                              activation=activation, dropout=dropout)
        self.conv2 = ARMAConv(in_dim=hid_dim, out_dim=out_dim, num_stacks=num_stacks, num_layers=num_layers,
                              activation=activation, dropout=dropout)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, g, feats):
        feats = F.relu(self.conv1(g, feats))
        feats = self.dropout(feats)
        feats = self.conv2(g, feats)
        return feats


def compute():
    torch.manual_seed(0)
    edges = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3), (1, 4)]
    src = torch.tensor([a for a, b in edges] + [b for a, b in edges])
    dst = torch.tensor([b for a, b in edges] + [a for a, b in edges])
    g = Graph(src, dst, 6)
    model = ARMA4NC(in_dim=5, hid_dim=4, out_dim=3, num_stacks=2, num_layers=2, activation=nn.ReLU(), dropout=0.0)
    with torch.no_grad():
        model.conv1.bias.uniform_(-0.1, 0.1)
        model.conv2.bias.uniform_(-0.1, 0.1)
    feats = torch.randn(6, 5)
    labels = torch.tensor([0, 1, 2, 1])
    logits = model(g, feats)
    loss = F.cross_entropy(logits[:4], labels)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
