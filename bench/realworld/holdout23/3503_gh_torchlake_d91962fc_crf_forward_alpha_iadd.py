# source: https://github.com/gitE0Z9/pytorch-implementations/commit/d91962fc5d9ee6dee1ca688e1b0f8e9c12034722
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# torchlake (gitE0Z9/pytorch-implementations), commit d91962fc "fix (bilstm-crf): inplace grad update".
# LinearCRFLoss.forward takes `pred = pred.log_softmax(-1)` (LogSoftmax saves its output for backward), and the CRF
# forward algorithm in calc_hypotheses_score starts its running score as a view of it, `alpha = x[:, 0, :,
# :].squeeze(-1)` with `x = pred.unsqueeze(-1)`, then accumulates `alpha += (emit_score + transition_score).sum(1)`
# per time step: each `+=` writes into the log-softmax output, so training the BiLSTM-CRF fails at backward
# ("... output 0 of LogSoftmax, is at version 4; expected version 0"). Fix: `alpha = alpha + (...).sum(1)`.
# The in-place version also wrote the running score into pred[:, 0], which calc_null_hypothesis_score then reads
# (its bos emit score); the fix's values are the forward algorithm's (a plain-torch replay of the original with
# saved tensors cloned still sees that aliasing and differs from the reference).
# Library module: 3503helpers_torchlake_crf_loss.py (ref: ..._fixed.py). Stand-ins here: torchlake's BiLSTMCRF
# (RNNDiscriminator: embedding with padding_idx, a bidirectional LSTM, LayerNorm and a linear head) reduced to those
# layers, the LinearCRF head's transition Parameter (its .data initialisation is the source's), and one Adam step of
# BiLSTMCRFTrainer's loss (criterion(output, y, model.head.transition)) on a random padded batch.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
crf_loss = importlib.import_module("3503helpers_torchlake_crf_loss")


class LinearCRF(nn.Module):
    def __init__(self, output_size, context):
        super().__init__()
        self.transition = nn.Parameter(torch.randn(output_size, output_size))
        self.transition.data[:, context.bos_idx] = 0
        self.transition.data[context.bos_idx, :] = 1e4
        self.transition.data[context.eos_idx, context.bos_idx] = 0
        self.transition.data[context.eos_idx, :] = 0
        self.transition.data[context.bos_idx, context.padding_idx] = 0
        self.transition.data[context.eos_idx, context.padding_idx] = 1e4
        self.transition.data[context.padding_idx, context.padding_idx] = 1e4


class BiLSTMCRF(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_dim, output_size, context):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=context.padding_idx)
        self.blocks = nn.LSTM(embed_dim, hidden_dim, 1, batch_first=True, bidirectional=True)
        self.neck = nn.LayerNorm(hidden_dim * 2)
        self.fc = nn.Linear(hidden_dim * 2, output_size)
        self.head = LinearCRF(output_size, context)

    def forward(self, x):
        y, _ = self.blocks(self.embed(x))
        return self.fc(self.neck(y))  # B, S, O


def compute():
    torch.manual_seed(0)
    context = crf_loss.NlpContext()
    model = BiLSTMCRF(vocab_size=20, embed_dim=8, hidden_dim=6, output_size=7, context=context)
    criterion = crf_loss.LinearCRFLoss(context)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.tensor([[1, 5, 7, 9, 2, 3], [1, 11, 4, 2, 3, 3], [1, 6, 8, 12, 13, 2]])
    y = torch.tensor([[1, 4, 5, 6, 2, 3], [1, 5, 4, 2, 3, 3], [1, 6, 6, 4, 5, 2]])
    output = model(x)
    loss = criterion(output, y, model.head.transition)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    out = {"loss": loss.detach()}
    for name, p in model.named_parameters():
        out["grad." + name] = p.grad.clone()
    out["transition.after"] = model.head.transition.detach().clone()
    return out


if __name__ == "__main__":
    compute()
