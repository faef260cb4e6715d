"""rwkv 0.8.32: the two proven findings of `inplacefix check` (eafcde2, stop 47):
`PIPELINE.sample_logits` (utils.py:82 and :84) writes `probs[probs < cutoff] = 0` and
`probs[sorted_ids[:-top_k]] = 0` into `probs = F.softmax(logits.float(), dim=-1)` (softmax saves
its result). Those lines are in the branch for a device other than the CPU; here the device test is
rewritten to take that branch on the CPU (line count kept). With logits requiring grad the method
stops before the writes: line 79 calls `.numpy()` on `torch.cumsum(sorted_probs)`, which requires
grad, and torch refuses (RuntimeError); and the method returns a Python int, so nothing it computes
is ever differentiated. With logits requiring no grad it runs (the library's use: sampling under
no_grad). False."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import rewritten, replaced
from rwkv import utils

P = utils.PIPELINE
method = P.sample_logits
expect_line(method, 82, "probs[probs < cutoff] = 0")
expect_line(method, 84, "probs[sorted_ids[:-top_k]] = 0")
device_branch = rewritten(method, [("if probs.device.type in ['cpu', 'privateuseone']:", "if False:")])


def run(requires_grad):
    torch.manual_seed(0)
    logits = torch.randn(16, requires_grad=requires_grad)
    out = P.sample_logits(P.__new__(P), logits, temperature=1.0, top_p=0.85, top_k=4)
    assert isinstance(out, int)


with replaced(P, "sample_logits", device_branch):
    for line in (82, 84):
        finding = "rwkv/utils.py:%d:IPF104" % line
        attempt(finding, "path", "sample_logits(logits requiring grad, top_k=4), device branch",
                lambda: run(True), expected=(RuntimeError,))
        attempt(finding, "context", "sample_logits(logits without grad, top_k=4), device branch: runs, returns an int",
                lambda: run(False))
