# source: own knowledge (a pointer-generator / copy head: vocabulary and copy logits split from one projection, the
# vocabulary part masked by a utils helper of another file that writes in place); runs with p08helpers_masking.py
# error: C (Output 0 of SplitWithSizesBackward0 is a view and is being modified inplace)
import torch
import torch.nn as nn

from p08helpers_masking import mask_logits_


class PointerHead(nn.Module):
    def __init__(self, dim=6, vocab=4, src=3):
        super().__init__()
        self.out = nn.Linear(dim, vocab + src)
        self.vocab, self.src = vocab, src

    def forward(self, h, keep):
        vocab_logits, copy_logits = self.out(h).split([self.vocab, self.src], dim=-1)
        vocab_logits = mask_logits_(vocab_logits, keep)
        return torch.cat([vocab_logits, copy_logits], dim=-1).log_softmax(-1)


def main():
    torch.manual_seed(0)
    m = PointerHead()
    keep = torch.tensor([True, True, False, True])
    out = m(torch.randn(2, 6), keep)[:, 0].sum()
    out.backward()
    return [out.detach(), m.out.weight.grad]
