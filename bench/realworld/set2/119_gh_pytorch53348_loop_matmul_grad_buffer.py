# source: https://github.com/pytorch/pytorch/issues/53348
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# A batched matmul written as nested loops accumulates into `res_torch = torch.zeros(..., requires_grad=True)`
# element by element (`res_torch[b][c][h][k] = res_torch[b][c][h][k] + ...`). The accumulator is a leaf that
# requires grad, so every indexed write is an in-place op on a view of a leaf and raises before backward.
import torch


def compute():
    torch.manual_seed(0)
    ma = torch.randn(1, 2, 2, 3).requires_grad_(True)
    mb = torch.randn(1, 2, 3, 2).requires_grad_(True)
    B, C, H, W = ma.shape
    B, C, W, K = mb.shape
    res_torch = torch.zeros((B, C, H, K), requires_grad=True)
    for b in range(B):
        for c in range(C):
            for h in range(H):
                for k in range(K):
                    for r in range(W):
                        res_torch[b][c][h][k] = res_torch[b][c][h][k] + ma[b][c][h][r] * mb[b][c][r][k]
    res_torch.sum().backward()
    return {"ma": ma.grad, "mb": mb.grad}


if __name__ == "__main__":
    compute()
