# source: https://github.com/pytorch/pytorch/issues/26596
# pattern: other
# codemod_fixable: yes
# error: A
# ref_semantics: same
# nn.Embedding(max_norm=...) renormalises the looked-up rows of its weight in place during forward. Here the
# full weight matrix was already used in a matmul ("Line a"), which saved it; the later lookup ("Line b") rewrites
# it, so backward fails. The in-place write is hidden inside the module (triggered by the max_norm kwarg).
import torch
import torch.nn as nn


def compute():
    torch.manual_seed(0)
    n, d, m = 3, 5, 7
    batch_size = 11

    embedding = nn.Embedding(n, d, max_norm=True)
    W = torch.randn((m, d), requires_grad=True)
    optimizer = torch.optim.Adam(list(embedding.parameters()) + [W], lr=1e-3)

    optimizer.zero_grad()
    idx = torch.tensor([1, 2])

    a = embedding.weight @ W.t()  # Line a
    b = embedding(idx) @ W.t()    # Line b

    out = (a.unsqueeze(0) + b.unsqueeze(1))
    loss = out.sigmoid().prod()
    loss.backward()
    grads = {"embedding.weight": embedding.weight.grad.clone(), "W": W.grad.clone()}
    optimizer.step()
    return grads


if __name__ == "__main__":
    compute()
