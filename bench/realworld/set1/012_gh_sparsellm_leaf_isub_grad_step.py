# source: https://github.com/BaiTheBest/SparseLLM/issues/13
# pattern: augassign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Hand-written gradient step on the auxiliary variable: `s_batch -= s_learning_rate * s_batch.grad` on a leaf.
import torch
import torch.nn as nn


def compute():
    torch.manual_seed(0)
    hidden_d, in_d, n_samples, batch_size = 6, 4, 8, 4
    alpha, gamma, s_learning_rate = 1.0, 1.0, 0.01
    w = torch.randn(hidden_d, in_d)
    X = torch.randn(in_d, n_samples).half()
    z = torch.randn(hidden_d, n_samples).half()
    p = torch.randn(hidden_d, n_samples).half()
    s = torch.randn(hidden_d, n_samples).half()
    grads = {}
    # s: [hidden_d, n_samples]
    for k in range(0, s.size(-1), batch_size):
        chunk = slice(k, k + batch_size)

        # get the "mini-batch" for each tensor and turn on autograd
        X_batch = X[:, chunk].to(dtype=torch.float32).requires_grad_(True)
        z_batch = z[:, chunk].to(dtype=torch.float32).requires_grad_(True)
        p_batch = p[:, chunk].to(dtype=torch.float32).requires_grad_(True)
        s_batch = s[:, chunk].to(dtype=torch.float32).requires_grad_(True)

        with torch.enable_grad():  # temporarily turn on the Pytorch computational graph functionality
            loss_s = alpha * torch.norm(s_batch - torch.matmul(w, X_batch))**2
            loss_s += gamma * torch.norm(p_batch - nn.functional.silu(s_batch) * z_batch)**2

        loss_s.backward()
        grads["s_batch_%d" % k] = s_batch.grad.clone()
        grads["X_batch_%d" % k] = X_batch.grad.clone()
        s_batch -= s_learning_rate * s_batch.grad
        s_batch.grad.zero_()
        s[:, chunk] = s_batch.detach().to(dtype=torch.float16)
    grads["s_final"] = s.float()
    return grads


if __name__ == "__main__":
    compute()
