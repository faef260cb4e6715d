# source: https://github.com/pyg-team/pytorch_geometric/issues/3621
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyTorch Geometric, torch_geometric/nn/conv/film_conv.py, FiLMConv.forward (issue #3621, label bug, closed): the
# skip branch is `out = gamma * self.lin_skip(x[1]) + beta; out = self.act(out)` with act = ReLU(), then each
# relation adds its messages with `out += self.propagate(...)`. ReLU saved its output for backward and the first
# `+=` overwrites it, so running examples/film.py fails ("... [torch.cuda.FloatTensor [4814, 320]], which is output 0
# of ReluBackward0, is at version 1; expected version 0 instead"). The reporter replaced the `+=` and it trained;
# later versions of film_conv.py read `out = out + self.propagate(...)`.
# Stand-ins: MessagePassing.propagate (aggr='mean') is written out with index_select / index_add over a fixed edge
# list (messages from source j to target i, mean over incoming edges); 6 nodes, 2 relations, 5 -> 4 channels; no
# SparseTensor branch; loss: sum of squares of the output.
import torch
import torch.nn as nn


def mean_propagate(edge_index, x, beta, gamma, act, num_nodes):
    src, dst = edge_index[0], edge_index[1]
    x_j = x.index_select(0, src)
    beta_i = beta.index_select(0, dst)
    gamma_i = gamma.index_select(0, dst)
    msg = gamma_i * x_j + beta_i
    if act is not None:
        msg = act(msg)
    summed = torch.zeros(num_nodes, msg.size(1)).index_add(0, dst, msg)
    count = torch.zeros(num_nodes).index_add(0, dst, torch.ones(dst.numel())).clamp(min=1)
    return summed / count.unsqueeze(-1)


class FiLMConv(nn.Module):
    def __init__(self, in_channels, out_channels, num_relations=1, act=nn.ReLU()):
        super().__init__()
        self.out_channels = out_channels
        self.num_relations = max(num_relations, 1)
        self.act = act
        self.lins = nn.ModuleList()
        self.films = nn.ModuleList()
        for _ in range(num_relations):
            self.lins.append(nn.Linear(in_channels, out_channels, bias=False))
            self.films.append(nn.Linear(in_channels, 2 * out_channels))
        self.lin_skip = nn.Linear(in_channels, out_channels, bias=False)
        self.film_skip = nn.Linear(in_channels, 2 * out_channels, bias=False)

    def forward(self, x, edge_index, edge_type=None):
        n = x.size(0)
        beta, gamma = self.film_skip(x).split(self.out_channels, dim=-1)
        out = gamma * self.lin_skip(x) + beta
        if self.act is not None:
            out = self.act(out)

        if self.num_relations <= 1:
            beta, gamma = self.films[0](x).split(self.out_channels, dim=-1)
            out += mean_propagate(edge_index, self.lins[0](x), beta, gamma, self.act, n)
        else:
            for i, (lin, film) in enumerate(zip(self.lins, self.films)):
                beta, gamma = film(x).split(self.out_channels, dim=-1)
                mask = edge_type == i
                out += mean_propagate(edge_index[:, mask], lin(x), beta, gamma, self.act, n)
        return out


def compute():
    torch.manual_seed(0)
    conv = FiLMConv(5, 4, num_relations=2)
    x = torch.randn(6, 5, requires_grad=True)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 0, 2, 4, 1],
                               [1, 2, 3, 4, 5, 0, 3, 5, 1, 4]])
    edge_type = torch.tensor([0, 0, 0, 1, 1, 1, 0, 1, 0, 1])
    out = conv(x, edge_index, edge_type)
    loss = (out ** 2).sum()
    loss.backward()
    grads = {n: p.grad for n, p in conv.named_parameters()}
    grads["x"] = x.grad
    return grads


if __name__ == "__main__":
    compute()
