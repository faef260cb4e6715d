# source: https://github.com/idiap/fast-transformers/pull/10
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# RecurrentLinearAttention (RNN-style state update): `Zi += K` / `Si += einsum(...)` mutate the memory returned at the
# previous time step, which that step's einsum saved for backward.
import torch
from torch.nn import Module


def elu_feature_map(x):
    return torch.nn.functional.elu(x) + 1


class RecurrentLinearAttention(Module):
    """Implement fast_transformers.attention.causal_linear_attention as a
    fixed-dimensional state recurrent model.
    """
    def __init__(self, feature_map=None, eps=1e-6):
        super(RecurrentLinearAttention, self).__init__()
        self.feature_map = feature_map or elu_feature_map
        self.eps = eps

    def forward(self, query, key, value, memory=None):
        # Apply the feature map to the query and key
        Q = self.feature_map(query)
        K = self.feature_map(key)

        # Extract some shapes
        N, H, D = Q.shape
        _, _, M = value.shape

        # Extract the memory or initialize it
        if memory is None:
            Si = query.new_zeros((N, H, D, M))
            Zi = query.new_zeros((N, H, D))
        else:
            Si, Zi = memory

        # Ensure the batch size did not change
        if len(Si) != N:
            raise ValueError("The batch size changed during iteration")

        # Update the internal state
        Zi += K
        Si += torch.einsum("nhd,nhm->nhdm", K, value)

        # Compute the output
        Z = 1. / (torch.einsum("nhd,nhd->nh", Q, Zi) + self.eps)
        V = torch.einsum("nhd,nhdm,nh->nhm", Q, Si, Z)

        return V, [Si, Zi]


def compute():
    torch.manual_seed(0)
    N, H, D, M, T = 2, 2, 3, 4, 3
    proj = torch.nn.Linear(5, H * (2 * D + M))
    attention = RecurrentLinearAttention()
    xs = torch.randn(T, N, 5)
    memory = None
    outputs = []
    for t in range(T):
        q, k, v = proj(xs[t]).split([H * D, H * D, H * M], dim=-1)
        V, memory = attention(q.view(N, H, D), k.view(N, H, D), v.view(N, H, M), memory=memory)
        outputs.append(V)
    loss = torch.stack(outputs).pow(2).sum()
    loss.backward()
    return {"proj.weight": proj.weight.grad, "proj.bias": proj.bias.grad}


if __name__ == "__main__":
    compute()
