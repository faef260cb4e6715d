# X-Avatar code/lib/model/helpers.py with the out-of-place masking the error message asks for (masked_fill instead of
# index assignment into vec); otherwise identical.
import torch


def masked_softmax(vec, mask, dim=-1, mode='softmax', soft_blend=1):
    if mode == 'softmax':
        vec = torch.distributions.Bernoulli(logits=vec).probs

        masked_exps = torch.exp(soft_blend * vec) * mask.float()
        masked_exps_sum = masked_exps.sum(dim)

        output = torch.zeros_like(vec)
        output[masked_exps_sum > 0, :] = masked_exps[masked_exps_sum > 0, :] / masked_exps_sum[masked_exps_sum > 0].unsqueeze(-1)

        output = (output * vec).sum(dim, keepdim=True)

        value = torch.distributions.Bernoulli(probs=output).logits
        index = None
    elif mode == 'max':
        vec = vec.masked_fill(~mask.bool(), -100)
        value, index = torch.max(vec, dim, keepdim=True)
    elif mode == 'min':
        vec = vec.masked_fill(~mask.bool(), 1)
        value, index = torch.min(vec, dim, keepdim=True)
    else:
        raise NotImplementedError
    return value, index
