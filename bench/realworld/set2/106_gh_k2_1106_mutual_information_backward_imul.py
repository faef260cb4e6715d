# source: https://github.com/k2-fsa/k2/pull/1106
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: differs
# k2's MutualInformationRecursionFunction (RNN-T losses) saves px_grad/py_grad in forward and scales them in place
# in backward (`px_grad *= ans_grad`), so a second backward over the retained graph fails. The C++/CUDA DP is
# replaced by a small pure-PyTorch recursion.
import torch
import torch.nn as nn


def _mutual_information_forward(px, py):
    # px: [B, S, T + 1], py: [B, S + 1, T]; returns ans[b] = log-sum over all monotonic paths.
    B, S, T1 = px.shape
    T = T1 - 1
    p = [[None] * (T + 1) for _ in range(S + 1)]
    p[0][0] = px.new_zeros(B)
    for t in range(1, T + 1):
        p[0][t] = p[0][t - 1] + py[:, 0, t - 1]
    for s in range(1, S + 1):
        p[s][0] = p[s - 1][0] + px[:, s - 1, 0]
        for t in range(1, T + 1):
            p[s][t] = torch.logaddexp(p[s - 1][t] + px[:, s - 1, t], p[s][t - 1] + py[:, s, t - 1])
    return p[S][T]


class MutualInformationRecursionFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, px, py, boundary=None):
        (B, S, T1) = px.shape
        assert py.shape == (B, S + 1, T1 - 1)
        with torch.enable_grad():
            px_, py_ = px.detach().requires_grad_(True), py.detach().requires_grad_(True)
            ans = _mutual_information_forward(px_, py_)
            # gradients of ans w.r.t. px and py (k2 gets these from its backward kernel with ans_grad = 1)
            (px_grad, py_grad) = torch.autograd.grad(ans.sum(), (px_, py_))
        ctx.save_for_backward(px_grad, py_grad)
        return ans.detach()

    @staticmethod
    def backward(ctx, ans_grad):
        (px_grad, py_grad) = ctx.saved_tensors
        (B,) = ans_grad.shape
        ans_grad = ans_grad.reshape(B, 1, 1)  # (B, 1, 1)
        px_grad *= ans_grad
        py_grad *= ans_grad
        return (px_grad, py_grad, None)


def mutual_information_recursion(px, py, boundary=None):
    return MutualInformationRecursionFunction.apply(px, py, boundary)


def get_rnnt_logprobs(lm, am, symbols, termination_symbol):
    # lm: [B, S + 1, C], am: [B, T, C] -> px: [B, S, T + 1], py: [B, S + 1, T]
    (B, T, C) = am.shape
    S = lm.shape[1] - 1
    logits = lm.unsqueeze(2) + am.unsqueeze(1)          # [B, S + 1, T, C]
    logprobs = logits.log_softmax(dim=-1)
    px = torch.gather(logprobs[:, :S], 3, symbols.reshape(B, S, 1, 1).expand(B, S, T, 1)).squeeze(-1)
    px = torch.cat((px, torch.full((B, S, 1), float('-inf'))), dim=2)  # [B, S, T + 1]
    py = logprobs[:, :, :, termination_symbol]          # [B, S + 1, T]
    return px, py


def rnnt_loss_simple(lm, am, symbols, termination_symbol):
    px, py = get_rnnt_logprobs(lm, am, symbols, termination_symbol)
    negated_loss = mutual_information_recursion(px=px, py=py)
    return -torch.sum(negated_loss)


def compute():
    torch.manual_seed(0)
    B, T, S, C, D = 2, 5, 3, 6, 4
    encoder = nn.Linear(D, C)        # acoustic model head
    decoder = nn.Embedding(C, C)     # prediction network (stateless)
    feats = torch.randn(B, T, D)
    symbols = torch.randint(1, C, (B, S))
    am = encoder(feats)
    lm = decoder(torch.cat([torch.zeros(B, 1, dtype=torch.long), symbols], dim=1))
    loss = rnnt_loss_simple(lm, am, symbols, termination_symbol=0)
    # two optimizers -> two gradient computations through the same graph
    enc_grads = torch.autograd.grad(loss, list(encoder.parameters()), retain_graph=True)
    dec_grads = torch.autograd.grad(loss, list(decoder.parameters()))
    return {"encoder.weight": enc_grads[0], "encoder.bias": enc_grads[1], "decoder.weight": dec_grads[0]}


if __name__ == "__main__":
    compute()
