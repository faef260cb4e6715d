"""torchattacks 3.5.1: the seven proven findings of `inplacefix check` (main at 3c26737, stop 43).

- EADEN / EADL1 `adjust_constant` (eaden.py, eadl1.py: 261, 265, 266): the binary search writes
  `upper_bound[mask]`, `const[mask]` in place after the step loop. The report says `const` was
  saved by `EAD_loss` (`const * F_loss`, line 115); that graph is consumed by `cost.backward()`
  at line 117, before any write, and the next outer step builds a new one. The path runs the
  attacks (several binary-search steps, so the writes happen between graphs) with grad on.
- SPSA `linf_clamp_` (spsa.py:114): `dx += x_adv - x - dx` after `torch.clamp(dx)`; with an input
  `x` that requires grad, `dx` requires grad after the first step and the next step's write breaks
  the clamp's save. The path calls `spsa_perturb` with such an `x` and backward; the control the
  same with the write out of place (`dx = dx + (...)`, one line); the context how the library runs
  it (`SPSA(model)(images, labels)`: `forward` detaches the images, nothing raises)."""

import _shim  # noqa: F401

import torch
import torchattacks
from _check import attempt, expect_line
from _rewrite import replaced, rewritten
from torchattacks.attacks import eaden, eadl1, spsa

for module, cls in ((eaden, eaden.EADEN), (eadl1, eadl1.EADL1)):
    expect_line(cls.adjust_constant, 261, "upper_bound[mask] = torch.min(upper_bound[mask], const[mask])")
    expect_line(cls.adjust_constant, 265, "const[mask] = (lower_bound[mask] + upper_bound[mask]) / 2")
    expect_line(cls.adjust_constant, 266, "const[~mask] = const[~mask] * 10")
expect_line(spsa.SPSA.linf_clamp_, 114, "dx += x_adv - x - dx")


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5))


def ead(cls):
    def run():
        torch.manual_seed(0)
        attack = cls(model(), max_iterations=10, binary_search_steps=4)
        attack(torch.rand(4, 3, 4, 4), torch.randint(0, 5, (4,)))
    return run


for name, cls in (("eaden", torchattacks.EADEN), ("eadl1", torchattacks.EADL1)):
    for line, code in ((261, "IPF104"), (265, "IPF104"), (266, "IPF104")):
        attempt(f"torchattacks/attacks/{name}.py:{line}:{code}", "path",
                f"{cls.__name__}(model, max_iterations=10, binary_search_steps=4)(images, labels) with grad on: "
                "adjust_constant writes between binary-search steps", ead(cls))

SPSA = "torchattacks/attacks/spsa.py:114:IPF101"


def perturb(edits=()):
    def run():
        attack = torchattacks.SPSA(model(), nb_iter=3, nb_sample=4, max_batch_size=4)
        x = torch.rand(2, 3, 4, 4, requires_grad=True)
        if edits:
            with replaced(spsa.SPSA, "linf_clamp_", rewritten(spsa.SPSA.linf_clamp_, edits)):
                attack.spsa_perturb(x * 1.0, torch.tensor([0, 1])).sum().backward()
        else:
            attack.spsa_perturb(x * 1.0, torch.tensor([0, 1])).sum().backward()
    return run


def library():
    attack = torchattacks.SPSA(model(), nb_iter=3, nb_sample=4, max_batch_size=4)
    attack(torch.rand(2, 3, 4, 4, requires_grad=True), torch.tensor([0, 1]))


attempt(SPSA, "path", "SPSA.spsa_perturb(x, y), x requiring grad, 3 steps, backward", perturb())
attempt(SPSA, "control", "the same with `dx = dx + (x_adv - x - dx)` (out of place)",
        perturb([("dx += x_adv - x - dx", "dx = dx + (x_adv - x - dx)")]))
attempt(SPSA, "context", "SPSA(model)(images, labels), images requiring grad (forward detaches them)", library)
