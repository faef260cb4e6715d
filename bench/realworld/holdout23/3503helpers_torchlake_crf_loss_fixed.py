# Library module for case 3503 (reference: the fix d91962fc applied): gitE0Z9/pytorch-implementations (torchlake)
# torchlake/tag_prediction/models/bilstm_crf/loss.py at d91962fc^ (LinearCRFLoss, the source's at its size), with
# torchlake/common/schemas/nlp.py's NlpContext reduced to the indices the loss reads (the source is a pydantic model
# with the same defaults: padding_idx 3).
import torch
from torch import nn


class NlpContext:
    unk_idx: int = 0
    bos_idx: int = 1
    eos_idx: int = 2
    padding_idx: int = 3


class LinearCRFLoss(nn.Module):
    def __init__(self, context: NlpContext = NlpContext()):
        """Linear CRF(conditional random field) loss"""
        super().__init__()
        self.context = context

    def calc_hypotheses_score(self, x: torch.Tensor, transition: torch.Tensor, mask: torch.Tensor | None = None):
        """predict path score: x (B, S, O), transition (O, O), mask (B, S) -> (B, O)"""
        seq_len = x.size(1)

        # B, S, O, 1
        x = x.unsqueeze(-1)

        # edge potential
        # 1, O, O
        transition_score = transition[None, :, :].log_softmax(-1)

        # stop criteria
        non_pad_length = seq_len - mask.sum(1).max().item()

        # forward
        # B, O
        alpha = x[:, 0, :, :].squeeze(-1)
        for t in range(1, seq_len):

            # node potential
            # B, O, 1
            emit_score = x[:, t, :, :]

            # message passing
            # B, O
            alpha = alpha + (emit_score + transition_score).sum(1)

            # early stopping
            if non_pad_length == t:
                break

        return alpha

    def calc_null_hypothesis_score(self, x: torch.Tensor, y: torch.Tensor, transition: torch.Tensor,
                                   mask: torch.Tensor | None = None) -> torch.Tensor:
        """true path score: x (B, S, O), y (B, S) -> (B,)"""
        # B, S
        emit_score = x.gather(2, y.unsqueeze(-1)).squeeze(-1)

        # B, S-1
        transition_score = transition.log_softmax(-1)[y[:, :-1], y[:, 1:]]
        if mask is not None:
            transition_score *= 1 - mask[:, 1:]

        # emit score of `to` token is what we need, plus emit score of bos
        score = transition_score + emit_score[:, 1:] + emit_score[:, 0:1]

        # B
        return score.sum(1)

    def forward(self, pred: torch.Tensor, gt: torch.Tensor, transition: torch.Tensor) -> torch.Tensor:
        """Likelihood Ratio for hypothesis token and real token: pred (B, S, O), gt (B, S), transition (O, O)"""
        # B, S
        mask = gt.eq(self.context.padding_idx).int()

        # B, S, O
        pred *= 1 - mask[:, :, None]
        pred = pred.log_softmax(-1)

        # B, O
        forward_score = self.calc_hypotheses_score(pred, transition, mask)
        # B
        gold_score = self.calc_null_hypothesis_score(pred, gt, transition, mask)
        return (forward_score - gold_score[:, None]).mean()
