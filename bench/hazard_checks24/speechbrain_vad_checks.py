"""speechbrain 1.1.2, inference/VAD.py: the three proven findings of stop 48 (recall48b's parameter rebound
to a view of itself): `VAD._manage_overlapped_chunks(small_chunks_prob)` writes the hamming-weighted
halves and middle back into its argument (`small_chunks_prob[0, half_point:] = ...`, lines 207, 210, 215).
The argument is `get_speech_prob_chunk(...)[:, :-1, :]`, a view of `torch.sigmoid(outputs)` (line 267),
whose output SigmoidBackward saved. Paths: a sigmoid output of a tensor that requires grad (the VAD's CRDNN
trained or fine-tuned, or any grad flowing to its input), sliced as get_speech_prob_file slices it, handed
to the method, backward; control: the writes made out of place on a clone (the method's own result);
context: the same call with grad off (inference, as `VAD.from_hparams` runs it with frozen parameters):
nothing is saved, nothing raises.

speechbrain.inference imports hyperpyyaml, sentencepiece and torchaudio at module level; the method uses
none of them: empty stand-ins."""

import sys
import types

import _shim  # noqa: F401
import torch

for _name in ("hyperpyyaml", "torchaudio", "sentencepiece"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
sys.modules["hyperpyyaml"].resolve_references = None  # type: ignore[attr-defined]
sys.modules["hyperpyyaml"].load_hyperpyyaml = None  # type: ignore[attr-defined]
sys.modules["sentencepiece"].SentencePieceProcessor = type("SentencePieceProcessor", (), {})  # type: ignore[attr-defined]
from _check import attempt, expect_line  # noqa: E402
from speechbrain.inference.VAD import VAD  # noqa: E402

FINDINGS = ("speechbrain/inference/VAD.py:207:IPF104", "speechbrain/inference/VAD.py:210:IPF104",
            "speechbrain/inference/VAD.py:215:IPF104")
expect_line(VAD._manage_overlapped_chunks, 207, "small_chunks_prob[0, half_point:] = small_chunks_prob[")


def overlapped(grad=True, out_of_place=False):
    def run():
        torch.manual_seed(0)
        vad = VAD.__new__(VAD)
        vad.device = "cpu"
        logits = torch.randn(4, 9, 1, requires_grad=grad)
        small_chunks_prob = torch.sigmoid(logits)[:, :-1, :]  # get_speech_prob_chunk's output, sliced as at line 151
        if out_of_place:
            small_chunks_prob = small_chunks_prob.clone()
        out = vad._manage_overlapped_chunks(small_chunks_prob)
        if grad:
            out.sum().backward()
    return run


for finding in FINDINGS:
    attempt(finding, "path", "sigmoid output of logits requiring grad, sliced [:, :-1, :], windowed, backward", overlapped())
    attempt(finding, "control", "the same on a clone of the slice (the writes then touch no saved tensor)",
            overlapped(out_of_place=True))
    attempt(finding, "context", "grad off (inference with frozen parameters): nothing saved", overlapped(grad=False))
