"""nnAudio 0.3.4: the three proven findings of `inplacefix check` (main at a4c47fa, stop 44).

- `nonlinear_func` of `Combined_Frequency_Periodicity` and `CFP` (nnAudio/features/cfp.py:186 and
  :424): `X = torch.relu(X)` (relu saves its result) then `X[:, :, :cutoff] = 0`. The path calls
  the method with a spectrogram that requires grad (g != 0, the branch flagged) and backward; the
  control the same with the first write out of place (`X = X.index_fill(...)` is not a one-line
  edit, so `X = torch.relu(X).clone()`: the saved result copied); the context: g = 0 (the log
  branch: `X.relu() + epsilon` saves nothing that is written).
- `Griffin_Lim.forward` (griffin_lim.py:129): `S.unsqueeze(-1) * angles` (line 111) saves `angles`
  for the gradient of `S`; the phase update `angles[:, :, :] = (...)` writes it. Griffin_Lim calls
  `torch.stft`/`torch.istft` with real (..., 2) tensors, which torch 2.x refuses ("istft requires a
  complex-valued input tensor"): the path runs it with stand-ins that give those calls the old
  real-tensor API through `view_as_complex`/`view_as_real` (differentiable, saving nothing of
  `angles`), a spectrogram requiring grad, and backward; the control the same with the update
  out of place (`angles = (...)`); the context: plain torch 2.13, where the module cannot run."""

import _shim  # noqa: F401

import contextlib

import torch
from _check import attempt, expect_line
from _rewrite import replaced, rewritten
from nnAudio.features import cfp, griffin_lim

CFP_FINDINGS = {"nnAudio/features/cfp.py:186:IPF104": cfp.Combined_Frequency_Periodicity,
                "nnAudio/features/cfp.py:424:IPF104": cfp.CFP}
GL = "nnAudio/features/griffin_lim.py:129:IPF104"
for line, cls in ((186, cfp.Combined_Frequency_Periodicity), (424, cfp.CFP)):
    expect_line(cls.nonlinear_func, line - 1, "X = torch.relu(X)")
    expect_line(cls.nonlinear_func, line, "X[:, :, :cutoff] = 0")
expect_line(griffin_lim.Griffin_Lim.forward, 111, "S.unsqueeze(-1) * angles,")
expect_line(griffin_lim.Griffin_Lim.forward, 129, "angles[:, :, :] = (")


def nonlinear(cls, g=0.24, edits=()):
    def run():
        torch.manual_seed(0)
        function = rewritten(cls.nonlinear_func, edits) if edits else cls.nonlinear_func
        X = torch.randn(2, 3, 12, requires_grad=True)
        function(None, X * 1.0, g, 2).sum().backward()
    return run


for finding, cls in CFP_FINDINGS.items():
    attempt(finding, "path", f"{cls.__name__}.nonlinear_func(spectrogram requiring grad, g=0.24), backward",
            nonlinear(cls))
    attempt(finding, "control", "the same with `X = torch.relu(X).clone()` (the saved result copied)",
            nonlinear(cls, edits=[("X = torch.relu(X)\n", "X = torch.relu(X).clone()\n")]))
    attempt(finding, "context", "g = 0 (the log branch)", nonlinear(cls, g=0))


@contextlib.contextmanager
def real_stft_api():
    """torch.stft/istft as Griffin_Lim calls them (real (..., 2) tensors, torch < 2.0)."""
    istft, stft = torch.istft, torch.stft
    torch.istft = lambda x, *a, **k: istft(torch.view_as_complex(x.contiguous()), *a, **k)
    torch.stft = lambda x, *a, **k: torch.view_as_real(stft(x, *a, return_complex=True, **k))
    try:
        yield
    finally:
        torch.istft, torch.stft = istft, stft


def reconstruct(edits=(), stand_in=True):
    def run():
        torch.manual_seed(0)
        module = griffin_lim.Griffin_Lim(n_fft=16, n_iter=3, device="cpu")
        forward = rewritten(griffin_lim.Griffin_Lim.forward, edits) if edits else griffin_lim.Griffin_Lim.forward
        S = torch.rand(1, 9, 5, requires_grad=True)
        with replaced(griffin_lim.Griffin_Lim, "forward", forward), \
                (real_stft_api() if stand_in else contextlib.nullcontext()):
            module(S * 1.0).sum().backward()
    return run


attempt(GL, "path", "Griffin_Lim(n_fft=16, n_iter=3)(spectrogram requiring grad), the real stft API, backward",
        reconstruct())
attempt(GL, "control", "the same with the phase update out of place (`angles = (`, line 129)",
        reconstruct([("angles[:, :, :] = (", "angles = (")]))
attempt(GL, "context", "plain torch 2.13 (istft refuses the real tensor)", reconstruct(stand_in=False),
        expected=(RuntimeError,))
