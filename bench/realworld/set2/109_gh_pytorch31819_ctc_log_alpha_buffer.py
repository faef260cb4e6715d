# source: https://github.com/pytorch/pytorch/issues/31819 (code: vadimkantorov/ctc, ctc.py)
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Pure-PyTorch CTC: the alpha recursion writes row t of a preallocated `log_alpha` buffer in place while row t-1
# (sliced out of the same buffer) is read. With the hand-written max-based logadd, torch.max saves those slices
# for backward, so the next row write invalidates them. (logsumexp(stack(...)) happened to work: stack copies.)
import torch
import torch.nn.functional as F


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='none',
             finfo_min_fp32=torch.finfo(torch.float32).min, finfo_min_fp16=torch.finfo(torch.float16).min):
    input_time_size, batch_size = log_probs.shape[:2]
    B = torch.arange(batch_size, device=input_lengths.device)

    _t_a_r_g_e_t_s_ = torch.cat([targets, targets[:, :1]], dim=-1)
    _t_a_r_g_e_t_s_ = torch.stack([torch.full_like(_t_a_r_g_e_t_s_, blank), _t_a_r_g_e_t_s_], dim=-1).flatten(start_dim=-2)

    diff_labels = torch.cat([torch.as_tensor([[False, False]], device=targets.device).expand(batch_size, -1),
                             _t_a_r_g_e_t_s_[:, 2:] != _t_a_r_g_e_t_s_[:, :-2]], dim=1)

    zero_padding, zero = 2, torch.tensor(finfo_min_fp16 if log_probs.dtype is torch.float16 else finfo_min_fp32,
                                         device=log_probs.device, dtype=log_probs.dtype)
    log_probs_ = log_probs.gather(-1, _t_a_r_g_e_t_s_.expand(input_time_size, -1, -1))
    log_alpha = torch.full((input_time_size, batch_size, zero_padding + _t_a_r_g_e_t_s_.shape[-1]), zero,
                           device=log_probs.device, dtype=log_probs.dtype)
    log_alpha[0, :, zero_padding + 0] = log_probs[0, :, blank]
    log_alpha[0, :, zero_padding + 1] = log_probs[0, B, _t_a_r_g_e_t_s_[:, 1]]
    for t in range(1, input_time_size):
        log_alpha[t, :, 2:] = log_probs_[t] + logadd(log_alpha[t - 1, :, 2:], log_alpha[t - 1, :, 1:-1],
                                                    torch.where(diff_labels, log_alpha[t - 1, :, :-2], zero))

    l1l2 = log_alpha[input_lengths - 1, B].gather(
        -1, torch.stack([zero_padding + target_lengths * 2 - 1, zero_padding + target_lengths * 2], dim=-1))
    loss = -torch.logsumexp(l1l2, dim=-1)
    return loss


def logadd(x0, x1, x2):
    # faster than torch.logsumexp(torch.stack([x0, x1, x2]), dim=0) on CPU
    m = torch.max(torch.max(x0, x1), x2)
    m = m.masked_fill(torch.isinf(m), 0)
    res = (x0 - m).exp() + (x1 - m).exp() + (x2 - m).exp()
    return res.log().add(m)


def compute():
    torch.manual_seed(0)
    T, B, C = 6, 2, 5
    logits = torch.randn(T, B, C, requires_grad=True)
    log_probs = F.log_softmax(logits, dim=-1)
    targets = torch.randint(1, C, (B, 2), dtype=torch.long)
    input_lengths = torch.full((B,), T, dtype=torch.long)
    target_lengths = torch.full((B,), 2, dtype=torch.long)
    custom_ctc = ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='none')
    custom_ctc_grad, = torch.autograd.grad(custom_ctc.sum(), logits, retain_graph=True)
    return {"logits": custom_ctc_grad}


if __name__ == "__main__":
    compute()
