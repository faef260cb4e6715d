"""Stop 51 (label51c): one small program per false group of the proven tier found in prec51b's second batch
(labelled by label51c): main d1b4fd6 proves each `probe` (each runs backward fine), and a control that raises
(the same code with what makes it safe taken away). `python prec51c_probes.py` runs them all;
`inplacefix check prec51c_probes.py` shows the findings (the controls are proven too, rightly)."""

import torch
import torch.nn.functional as F
from torch import nn


# dead-constant-arm (yolov5 utils/general.py:956): the write sits under `if merge and ...` where `merge = False` is a
# local constant assigned once and never changed: the arm never runs. (Also seen: the class index `j` of
# `conf, j = x.max(1, keepdim=True)`, as `j.float()` in a cat, is what makes the check read `x` as requiring grad
# here; with only `x[:, 4:5]` in the cat it is not proven.)
def nms_probe(prediction):
    merge = False
    output = []
    for x in prediction:
        x = x[x[:, 4] > 0.5]
        conf, j = x[:, 5:].max(1, keepdim=True)
        x = torch.cat((x[:, :4], x[:, 4:5], j.float()), 1)
        n = x.shape[0]
        boxes, scores = x[:, :4], x[:, 4]
        i = scores.argsort()
        if merge and 1 < n < 3000.0:
            iou = boxes[i].sum(1, keepdim=True) > 0.5
            weights = iou * scores[None]
            x[i, :4] = torch.mm(weights, x[:, :4]).float() / weights.sum(1, keepdim=True)
        output.append(x[i])
    return output


def nms_control(prediction):
    merge = True
    output = []
    for x in prediction:
        x = x[x[:, 4] > 0.5]
        conf, j = x[:, 5:].max(1, keepdim=True)
        x = torch.cat((x[:, :4], x[:, 4:5], j.float()), 1)
        n = x.shape[0]
        boxes, scores = x[:, :4], x[:, 4]
        i = scores.argsort()
        if merge and 1 < n < 3000.0:
            iou = boxes[i].sum(1, keepdim=True) > 0.5
            weights = iou * scores[None]
            x[i, :4] = torch.mm(weights, x[:, :4]).float() / weights.sum(1, keepdim=True)
        output.append(x[i])
    return output


# init-param-operand (onmt utils/loss.py:218, :249): the scores are detached LM output (or a numpy-backed CTranslate2
# result) divided by `self.tau`, an attribute set from a constructor parameter (onmt: `lm_prior_tau`, documented
# float, built from `opt.lm_prior_tau`). Nothing requires grad, so log_softmax records nothing; the check reads the
# attribute as possibly requiring grad (with `self.tau = 2.0` in __init__ it is not proven).
class LMPrior:
    def __init__(self, gen, tau):
        self.gen, self.tau = gen, tau

    def probe(self, h):
        s = self.gen(h).detach().clone() / self.tau
        s = F.log_softmax(s, dim=-1)
        s[:, 0] = -50
        return s

    def control(self, h):
        s = self.gen(h).clone() / self.tau
        s = F.log_softmax(s, dim=-1)
        s[:, 0] = -50
        return s


# none-deref-before-write (funasr cif/pif predictors, 5 findings): `alphas` is relu's output; with a mask it is
# rebound to `alphas * mask` before the write; without one, `mask.squeeze(-1)` raises AttributeError before the
# write. The only path on which the write hits relu's output dereferences None first.
class Cif(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 1)

    def probe(self, hidden, target_length, mask=None):
        alphas = torch.nn.functional.relu(self.proj(hidden))
        if mask is not None:
            mask = mask.transpose(-1, -2).float()
            alphas = alphas * mask
        alphas = alphas.squeeze(-1)
        mask = mask.squeeze(-1)
        token_num = alphas.sum(-1)
        alphas *= (target_length / token_num)[:, None]
        return alphas, mask

    def control(self, hidden, target_length, mask=None):
        alphas = torch.nn.functional.relu(self.proj(hidden))
        if mask is not None:
            mask = mask.transpose(-1, -2).float()
        alphas = alphas.squeeze(-1)
        mask = mask.squeeze(-1)
        token_num = alphas.sum(-1)
        alphas *= (target_length / token_num)[:, None]
        return alphas, mask


# default-false-flag (funasr data2vec multihead_attention.py:39): `F.dropout(x, ..., inplace=inplace)` where
# `inplace` defaults to False and the caller (on softmax's output) does not pass it: the dropout is out of place.
class Drop(nn.Module):
    def forward(self, x, inplace: bool = False):
        return torch.nn.functional.dropout(x, p=0.5, training=True, inplace=inplace)


class DropUser(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = Drop()

    def probe(self, scores):
        w = torch.softmax(scores, dim=-1)
        return self.drop(w)

    def control(self, scores):
        w = torch.softmax(scores, dim=-1)
        return self.drop(w, inplace=True)


# tensor-index-copy (funasr specaug/profileaug.py:97, :98, :137): the index is a one-element tensor (a row of
# torch.nonzero), so `profile[idx, spk]` is an advanced-index copy: normalize saves the copy, not profile. The
# cousin of prec51b's where-tuple-index.
def merge_probe(profile, mask):
    valid = torch.nonzero(mask[0])
    spk = valid[0]
    profile[0, spk] = torch.nn.functional.normalize(profile[0, spk], dim=-1)
    return profile


def merge_control(profile, mask):
    valid = torch.nonzero(mask[0])
    spk = int(valid[0])
    profile[0, spk] = torch.nn.functional.normalize(profile[0, spk], dim=-1)
    return profile


def _outcome(fn):
    try:
        fn()
        return "runs"
    except RuntimeError as exc:
        return "raises: " + str(exc).splitlines()[0][:90]


def _attr(fn):
    try:
        fn()
    except AttributeError as exc:
        return str(exc)
    raise SystemExit("expected an AttributeError")


def main():
    torch.manual_seed(0)

    def pred():
        return torch.cat((torch.randn(1, 6, 4), torch.rand(1, 6, 1) * 0.5 + 0.5, torch.rand(1, 6, 3)), 2).requires_grad_()

    lin = nn.Linear(4, 5)

    cif = Cif()
    mask = torch.ones(2, 1, 3)
    tl = torch.tensor([2.0, 3.0])

    cases = {
        "Cif.probe (mask given)": lambda: cif.probe(torch.randn(2, 3, 4), tl, mask)[0].sum().backward(),
        "Cif.probe (no mask: AttributeError first)": lambda: _attr(lambda: cif.probe(torch.randn(2, 3, 4), tl)),
        "Cif.control": lambda: cif.control(torch.randn(2, 3, 4), tl, mask)[0].sum().backward(),
        "DropUser.probe": lambda: DropUser().probe(torch.randn(2, 5, requires_grad=True)).sum().backward(),
        "DropUser.control": lambda: DropUser().control(torch.randn(2, 5, requires_grad=True)).sum().backward(),
        "merge_probe": lambda: merge_probe(torch.randn(2, 3, 4, requires_grad=True) * 1.0, torch.ones(2, 3)).sum().backward(),
        "merge_control": lambda: merge_control(torch.randn(2, 3, 4, requires_grad=True) * 1.0, torch.ones(2, 3)).sum().backward(),
        "LMPrior.probe (tau a float)": lambda: (LMPrior(lin, 2.0).probe(torch.randn(3, 4)).sum(),
                                                lin.weight.sum().backward()),
        "LMPrior.control": lambda: LMPrior(lin, 2.0).control(torch.randn(3, 4)).sum().backward(),
        "nms_probe": lambda: nms_probe(pred())[0].sum().backward(),
        "nms_control": lambda: nms_control(pred())[0].sum().backward(),
    }
    for name, fn in cases.items():
        print(f"{name}: {_outcome(fn)}")


if __name__ == "__main__":
    main()
