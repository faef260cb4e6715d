"""pyro-ppl 1.9.2: the proven findings of `inplacefix check` (the same before and after issue 24's
changes). Each path runs with grad on and inputs requiring grad, then backward."""

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from _rewrite import replaced, rewritten
from pyro.contrib.mue.missingdatahmm import MissingDataDiscreteHMM
from pyro.distributions.gaussian_scale_mixture import GaussianScaleMixture
from pyro.distributions.rejector import Rejector

expect_line(MissingDataDiscreteHMM.filter, 180, "filter[..., i, :] = torch.logsumexp(")


def hmm():
    init = torch.randn(2, requires_grad=True)
    trans = torch.randn(2, 2, requires_grad=True)
    obs = torch.randn(2, 3, requires_grad=True)
    value = torch.nn.functional.one_hot(torch.tensor([0, 1, 2, 1]), 3).float()
    MissingDataDiscreteHMM(init, trans, obs).filter(value).sum().backward()


def hmm_one_step(edits=()):
    """One observation step: the loop (lines 179-185) does not run, so line 176 is the only write."""
    def run():
        init = torch.randn(2, requires_grad=True)
        trans = torch.randn(2, 2, requires_grad=True)
        obs = torch.randn(2, 3, requires_grad=True)
        value = torch.nn.functional.one_hot(torch.tensor([2]), 3).float()
        with replaced(MissingDataDiscreteHMM, "filter", rewritten(MissingDataDiscreteHMM.filter, edits)):
            MissingDataDiscreteHMM(init, trans, obs).filter(value).sum().backward()
    return run


expect_line(MissingDataDiscreteHMM.filter, 176, "filter[..., 0, :] = filter[..., 0, :] - torch.logsumexp(")
attempt("pyro/contrib/mue/missingdatahmm.py:176:IPF104", "path", "filter over 1 step (line 176 alone), logits requiring grad",
        hmm_one_step())
attempt("pyro/contrib/mue/missingdatahmm.py:176:IPF104", "control",
        "the same with logsumexp at line 177 given a clone (what it saves is not the written tensor)",
        hmm_one_step([("filter[..., 0, :], -1, True", "filter[..., 0, :].clone(), -1, True")]))
attempt("pyro/contrib/mue/missingdatahmm.py:180:IPF104", "path", "filter over 4 steps, logits requiring grad", hmm)
attempt("pyro/contrib/mue/missingdatahmm.py:183:IPF104", "path", "filter over 4 steps, logits requiring grad", hmm)

expect_line(GaussianScaleMixture.log_prob, 104, "result -= 0.5 * math.log(2.0 * math.pi) * float(self.dim)")


def gsm():
    coord = torch.rand(3, requires_grad=True)
    logits = torch.randn(2, requires_grad=True)
    scale = (torch.rand(2) + 0.5).requires_grad_()
    GaussianScaleMixture(coord, logits, scale).log_prob(torch.randn(3)).backward()


attempt("pyro/distributions/gaussian_scale_mixture.py:104:IPF101", "path", "log_prob, parameters requiring grad", gsm)
attempt("pyro/distributions/gaussian_scale_mixture.py:105:IPF101", "path", "log_prob, parameters requiring grad", gsm)

expect_line(Rejector.rsample, 65, "probs = torch.exp(log_prob_accept).clamp_(0.0, 1.0)")


def rejector():
    torch.manual_seed(0)
    loc = torch.zeros(3, requires_grad=True)
    proposal = torch.distributions.Normal(loc, 1.0)
    r = Rejector(proposal.rsample, lambda x: -x.abs() + loc * 0, torch.zeros(()),
                 batch_shape=proposal.batch_shape, event_shape=proposal.event_shape)
    r.rsample().sum().backward()


attempt("pyro/distributions/rejector.py:65:IPF103", "path", "Rejector.rsample, the acceptance log-prob requiring grad", rejector)
attempt("pyro/distributions/rejector.py:70:IPF103", "path", "Rejector.rsample, the acceptance log-prob requiring grad", rejector)
