"""sober-bo 2.0.4 (sober/FBGP/_fully_Bayesian_gp.py:121, :123 `LogMarginalLikelihood.log_to_exp_transform`): the
proven findings of `inplacefix check` (stop 58, fresh58, end of stop). `Theta = theta.exp()` (:119; exp saves its
output) and then `Theta[0] = self.eta + Theta[0]` (:121, one hyperparameter vector) or `Theta[:, 0] = self.eta +
Theta[:, 0]` (:123, a batch of them) writes it: with log-hyperparameters that require grad (the marginal likelihood
`lml(theta)` differentiated in theta, as a MAP fit does), backward raises. Real by this file's convention (the
library evaluates the likelihood on sampled hyperparameters without grad). Out of place (`torch.cat`) runs. The method
is compiled alone from the shipped file, with a stand-in self (eta)."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("sober/FBGP/_fully_Bayesian_gp.py")
assert linecache.getline(PATH, 121).strip() == "Theta[0] = self.eta + Theta[0]"
assert linecache.getline(PATH, 123).strip() == "Theta[:,0] = self.eta + Theta[:,0]"
OUT = {121: "Theta = torch.cat([(self.eta + Theta[0]).reshape(1), Theta[1:]])",
       123: "Theta = torch.cat([(self.eta + Theta[:,0]).unsqueeze(1), Theta[:, 1:]], 1)"}


def run(line, shipped):
    ns = compile_alone(PATH, {"LogMarginalLikelihood.log_to_exp_transform"}, {"torch": torch},
                       replace={} if shipped else {line: OUT[line]})

    def go():
        theta = torch.randn(4, requires_grad=True) if line == 121 else torch.randn(5, 4, requires_grad=True)
        out = ns["log_to_exp_transform"](types.SimpleNamespace(eta=torch.tensor(0.3)), theta * 1)
        out.sum().backward()
        assert theta.grad is not None
    return go


for line, what in ((121, "one hyperparameter vector"), (123, "a batch of hyperparameter vectors")):
    fid = f"sober/FBGP/_fully_Bayesian_gp.py:{line}:IPF104"
    attempt(fid, "path", f"log_to_exp_transform(theta), {what} that requires grad: the write spoils exp's saved "
            "output, backward raises", run(line, True))
    attempt(fid, "control", "torch.cat (out of place): runs", run(line, False))
