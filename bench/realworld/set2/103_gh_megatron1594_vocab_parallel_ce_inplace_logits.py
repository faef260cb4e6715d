# source: https://github.com/NVIDIA/Megatron-LM/pull/1594
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Megatron's VocabParallelCrossEntropy Function does `logits -= logits_max` and `torch.exp(..., out=...)` on its
# input; `.float()` is a no-op for fp32 logits, so a z-loss that saved the same logits fails in backward.
# Single-rank reduction: the tensor-parallel all_reduce calls are identities here.
import torch
import torch.nn as nn
import torch.nn.functional as F


class VocabUtility:
    """Split the vocabulary into `world_size` chunks (one chunk when running on a single rank)."""

    @staticmethod
    def vocab_range_from_per_partition_vocab_size(per_partition_vocab_size, rank, world_size):
        index_f = rank * per_partition_vocab_size
        index_l = index_f + per_partition_vocab_size
        return index_f, index_l


class VocabParallelCrossEntropy:
    """Computes the cross entropy loss with the vocabulary split across ranks."""

    @staticmethod
    def calculate_logits_max(vocab_parallel_logits):
        vocab_parallel_logits = vocab_parallel_logits.float()
        # Maximum value along vocab dimension across all GPUs.
        logits_max = torch.max(vocab_parallel_logits, dim=-1)[0]
        return vocab_parallel_logits, logits_max

    @staticmethod
    def calculate_predicted_logits(vocab_parallel_logits, target, logits_max, vocab_start_index, vocab_end_index):
        # In-place subtraction reduces memory pressure.
        vocab_parallel_logits -= logits_max.unsqueeze(dim=-1)

        # Create a mask of valid vocab ids (1 means it needs to be masked).
        target_mask = (target < vocab_start_index) | (target >= vocab_end_index)
        masked_target = target.clone() - vocab_start_index
        masked_target[target_mask] = 0

        # Get predicted-logits = logits[target].
        partition_vocab_size = vocab_parallel_logits.size()[-1]
        logits_2d = vocab_parallel_logits.view(-1, partition_vocab_size)
        masked_target_1d = masked_target.view(-1)
        arange_1d = torch.arange(start=0, end=logits_2d.size()[0], device=logits_2d.device)
        predicted_logits_1d = logits_2d[arange_1d, masked_target_1d]
        predicted_logits_1d = predicted_logits_1d.clone().contiguous()
        predicted_logits = predicted_logits_1d.view_as(target)
        predicted_logits[target_mask] = 0.0

        exp_logits = vocab_parallel_logits
        torch.exp(vocab_parallel_logits, out=exp_logits)
        sum_exp_logits = exp_logits.sum(dim=-1)
        return target_mask, masked_target_1d, predicted_logits, sum_exp_logits, exp_logits

    @staticmethod
    def calculate_cross_entropy_loss(exp_logits, predicted_logits, sum_exp_logits):
        # Loss = log(sum(exp(logits))) - predicted-logit.
        loss = torch.log(sum_exp_logits) - predicted_logits
        # Normalize and optionally smooth logits
        exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))
        return exp_logits, loss


class _VocabParallelCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, vocab_parallel_logits, target):
        vocab_parallel_logits, logits_max = VocabParallelCrossEntropy.calculate_logits_max(vocab_parallel_logits)
        # torch.distributed.all_reduce(logits_max, op=MAX, group=tp_group)  -- single rank: no-op

        partition_vocab_size = vocab_parallel_logits.size()[-1]
        rank, world_size = 0, 1
        vocab_start_index, vocab_end_index = VocabUtility.vocab_range_from_per_partition_vocab_size(
            partition_vocab_size, rank, world_size)

        (target_mask, masked_target_1d, predicted_logits, sum_exp_logits, exp_logits) = \
            VocabParallelCrossEntropy.calculate_predicted_logits(
                vocab_parallel_logits, target, logits_max, vocab_start_index, vocab_end_index)
        # all_reduce(predicted_logits), all_reduce(sum_exp_logits)  -- single rank: no-op

        exp_logits, loss = VocabParallelCrossEntropy.calculate_cross_entropy_loss(
            exp_logits, predicted_logits, sum_exp_logits)

        # Store softmax, target-mask and masked-target for backward pass.
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target_1d = ctx.saved_tensors

        # All the inputs have softmax as their gradient.
        grad_input = softmax
        partition_vocab_size = softmax.size()[-1]
        grad_2d = grad_input.view(-1, partition_vocab_size)
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0], device=grad_2d.device)
        softmax_update = 1.0 - target_mask.view(-1).float()
        grad_2d[arange_1d, masked_target_1d] -= softmax_update

        # Finally elementwise multiplication with the output gradients.
        grad_input.mul_(grad_output.unsqueeze(dim=-1))
        return grad_input, None


def vocab_parallel_cross_entropy(vocab_parallel_logits, target):
    return _VocabParallelCrossEntropy.apply(vocab_parallel_logits, target)


class TinyLM(nn.Module):
    def __init__(self, vocab_size=16, hidden=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU())
        self.output_layer = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, tokens):
        h = self.mlp(self.embedding(tokens))   # [s, b, h]
        return self.output_layer(h)            # [s, b, v], fp32 logits


def compute():
    torch.manual_seed(0)
    model = TinyLM()
    tokens = torch.randint(0, 16, (6, 2))
    labels = torch.randint(0, 16, (6, 2))
    logits = model(tokens)
    # auxiliary z-loss on the same logits (the "other computation" that also needs them in backward)
    z_loss = 1e-2 * torch.logsumexp(logits, dim=-1).pow(2).mean()
    loss = vocab_parallel_cross_entropy(logits, labels).mean() + z_loss
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
