"""fairseq 0.12.2 (sdist): the three proven findings of `inplacefix check` on main e3574f0 (stop 49,
prec49). fairseq's package `__init__` imports hydra, omegaconf and its C extensions, so the driver
compiles each flagged function alone from the unpacked sdist (ast, line numbers kept; FAIRSEQ_SRC, the
folder holding `fairseq/`, default /work/tmp/prec49/site3: `pip download --no-deps fairseq==0.12.2`,
unpack) in a namespace holding what it reads (torch, F, fairseq's own `index_put`/`is_xla_tensor`
compiled the same way).

- search.py:699 (IPF103) `probs = lprobs.exp_()` on the `else` arm of `Sampling.step`; the report
  says `probs` is the output of `lprobs.exp_()` at line 697, which is the `elif sampling_topk > 0`
  arm: the two arms exclude each other. The path: `step(1, lprobs, scores)` with lprobs requiring grad
  from an op that saves no output (`w * x`), no top-k / top-p (the `else` arm), backward through the
  returned scores: runs; the top-k arm (line 697) the same: runs. Context: lprobs from `log_softmax`
  (fairseq's `get_normalized_probs`) raises, "output 0 of LogSoftmax" (the caller's saved output, a
  hazard the report does not name); fairseq samples in `SequenceGenerator.generate`, under no_grad.
  False (group exclusive-arms).
- examples/speech_text_joint_to_text/criterions/text_guide_cross_entropy_acc.py:129 (IPF103)
  `probs_teacher = lprobs_teacher.exp().masked_fill_(...)`, then line 130 `probs_teacher =
  probs_teacher.detach()`: exp's result feeds only a detached copy, so exp's backward never runs.
  The path: `guide_loss_and_acc` (alpha 0.8, past disable_update_num) with student and teacher
  log-probabilities requiring grad, backward: runs. Context: line 130 removed (the product keeps the
  exp node): raises, so the write is reached and only the detach keeps it harmless.
  False (group saved-by-detached-result, as pypots gpt4ts/backbone.py:107 at stop 47).
- models/wav2vec/wav2vec2.py:560 (IPF104) `logits[1:] = index_put(logits[1:], neg_is_pos, inf)`:
  the report says `logits` was saved by `torch.mul` in `index_put`'s XLA arm (utils.py:742,
  `torch.mul(tensor, ~indices)`); a product with a boolean mask that requires no grad saves only the
  mask, and `logits` is the output of a division by a number (saves nothing). The path:
  `Wav2Vec2Model.compute_preds` with x, y, negatives requiring grad and a negative equal to the
  positive (so the write runs), backward: runs on the CPU arm (`tensor[indices] = value`) and with
  `is_xla_tensor` forced true (the `torch.mul` arm, on CPU tensors): runs. Context: the same XLA arm
  with the mask made a float tensor requiring grad (then mul saves `tensor`): raises.
  False (group helper-mul-by-mask: the helper's summary says it saves its argument through
  `torch.mul(tensor, ~indices)`; `~` of a tensor is boolean or integer, never requires grad, so mul
  saves only the mask; the same mul written inline is not proven)."""

import _shim  # noqa: F401
import ast
import os
import types

import torch
import torch.nn.functional as F
from _check import attempt, expect_line

SRC = os.environ.get("FAIRSEQ_SRC", "/work/tmp/prec49/site3")


def load(relpath, qualname, namespace):
    """The function `qualname` (Class.method or function) of fairseq/relpath compiled alone."""
    path = os.path.join(SRC, "fairseq", relpath)
    body = ast.parse(open(path).read(), path).body
    *owners, name = qualname.split(".")
    for owner in owners:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == owner).body
    fn = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == name)
    fn.decorator_list = []  # @torch.jit.export only
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), namespace)
    return namespace[name]


# search.py:699 ------------------------------------------------------------------------------------
step = load("search.py", "Sampling.step", {"torch": torch, "Optional": __import__("typing").Optional,
                                            "Tensor": torch.Tensor})
expect_line(step, 697, "probs = lprobs.exp_()")
expect_line(step, 699, "probs = lprobs.exp_()")
F699 = "fairseq/search.py:699:IPF103"


def sampling(topk=-1, log_softmax=False):
    def run():
        torch.manual_seed(0)
        w = torch.rand(10, requires_grad=True)
        x = torch.randn(2, 3, 10)
        lprobs = torch.log_softmax(w * x, dim=-1) if log_softmax else -(w * x).abs()
        scores = torch.zeros(2, 3, 4)
        self = types.SimpleNamespace(sampling_topk=topk, sampling_topp=-1.0)
        scores_buf, indices_buf, beams_buf = step(self, 1, lprobs, scores)
        scores_buf.sum().backward()
        assert w.grad is not None
    return run


attempt(F699, "path", "Sampling.step(1, lprobs = -(w*x).abs() requiring grad), no top-k/top-p (else arm), backward",
        sampling())
attempt(F699, "path", "the same with sampling_topk=4 (the elif arm, line 697), backward", sampling(topk=4))
attempt(F699, "context", "else arm with lprobs = log_softmax(w*x) (the caller's saved output), backward",
        sampling(log_softmax=True))

# text_guide_cross_entropy_acc.py:129 --------------------------------------------------------------
GUIDE = "examples/speech_text_joint_to_text/criterions/text_guide_cross_entropy_acc.py"
guide = load(GUIDE, "GuidedCrossEntAccCriterion.guide_loss_and_acc", {"torch": torch, "F": F})
expect_line(guide, 129, "probs_teacher = lprobs_teacher.exp().masked_fill_(")
expect_line(guide, 130, "probs_teacher = probs_teacher.detach()")
F129 = "fairseq/" + GUIDE + ":129:IPF103"


def guided(edits=()):
    def run():
        torch.manual_seed(0)
        w = torch.rand(8, requires_grad=True)
        student = torch.log_softmax(w * torch.randn(2, 5, 8), dim=-1)
        teacher = torch.log_softmax(w * torch.randn(2, 5, 8), dim=-1)
        student.batch_first = teacher.batch_first = True
        target = torch.randint(0, 8, (2, 5))
        target[0, -1] = 1  # padding
        self = types.SimpleNamespace(alpha=0.8, disable_update_num=0, padding_idx=1)
        model = types.SimpleNamespace(num_updates=10)
        f = guide
        if edits:
            from _rewrite import rewritten
            f = rewritten(guide, edits)
        loss, nll_loss, correct, total = f(self, model, student, teacher, target)
        (loss + nll_loss).backward()
    return run


attempt(F129, "path", "guide_loss_and_acc(alpha 0.8, student and teacher log-probs requiring grad), backward", guided())
attempt(F129, "context", "line 130 made `probs_teacher = probs_teacher` (no detach): raises",
        guided([("probs_teacher = probs_teacher.detach()", "probs_teacher = probs_teacher")]))

# wav2vec2.py:560 ----------------------------------------------------------------------------------
xla = {"on": False}
is_xla_tensor = load("utils.py", "is_xla_tensor", {"torch": torch})
utils_ns = {"torch": torch, "is_xla_tensor": lambda t: xla["on"] or is_xla_tensor(t)}
index_put = load("utils.py", "index_put", utils_ns)
expect_line(index_put, 742, "tensor = torch.mul(tensor, ~indices) + torch.mul(value, indices)")
compute_preds = load("models/wav2vec/wav2vec2.py", "Wav2Vec2Model.compute_preds",
                     {"torch": torch, "index_put": index_put, "is_xla_tensor": utils_ns["is_xla_tensor"]})
expect_line(compute_preds, 560, "logits[1:] = index_put(logits[1:], neg_is_pos, self._inftensor)")
F560 = "fairseq/models/wav2vec/wav2vec2.py:560:IPF104"


def preds(on_xla, float_mask=False):
    def run():
        xla["on"] = on_xla
        torch.manual_seed(0)
        w = torch.rand(6, requires_grad=True)
        x = w * torch.randn(2, 3, 6)  # B x T x C
        y = w * torch.randn(2, 3, 6)
        negatives = (w * torch.randn(4, 2, 3, 6))
        negatives = torch.cat([negatives[:1], y.unsqueeze(0), negatives[2:]], dim=0)  # one negative == y
        self = types.SimpleNamespace(logit_temp=0.1)
        if float_mask:
            self._inftensor = torch.tensor(-1e9)
            utils_ns["torch"] = types.SimpleNamespace(mul=lambda a, b: torch.mul(a, b.float().requires_grad_()
                                                                                 if b.dtype == torch.bool else b))
        try:
            logits = compute_preds(self, x, y, negatives)
            assert torch.isinf(logits).any() or float_mask or on_xla
            logits.masked_fill(torch.isinf(logits), 0).sum().backward()
        finally:
            xla["on"] = False
            utils_ns["torch"] = torch
    return run


attempt(F560, "path", "compute_preds(x, y, negatives requiring grad, one negative == y), CPU arm, backward",
        preds(False))
attempt(F560, "path", "the same with is_xla_tensor forced true (index_put's torch.mul arm), backward", preds(True))
attempt(F560, "context", "XLA arm with the mask as a float tensor requiring grad (mul then saves logits): raises",
        preds(True, float_mask=True))
