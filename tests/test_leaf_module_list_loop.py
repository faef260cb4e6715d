"""Family B (stB38): a parameter reached through the loop variable of a loop over a list of
modules the file builds (``for head, p in zip(self.heads, priors): head.bias[0] -= 2.0``,
``for i, head in enumerate(self.heads)``, ``for head in self.heads``), written in place with grad
on in an init method: PyTorch refuses it ("a leaf Variable that requires grad ...").

The loop variable is any element of the list; where every element is a torch module
(``nn.ModuleList(nn.Linear(d, k) for k in sizes)``), ``head.bias`` is a parameter, proven as any
parameter reached through the file's modules (every way into the method seen with grad on: from the script's ``main()``, no
requires_grad turned off). Written from the pattern (prior-initialised classifier heads), run
with torch: the original raises, the fix's results equal a ``no_grad`` control. Negative
controls: the method run under ``no_grad``; the list's elements not all modules of known kind
(a plain Python list, the other side of the ``zip``, a list appended to); the module turning requires_grad off.
"""

from __future__ import annotations

import torch

from tests.test_fix24b_forward_inputs import HEADER, fixed, marks, run

HEADS = """\
class Heads(nn.Module):
    def __init__(self, d, sizes, priors):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(d, k) for k in sizes)
        self._init_priors(priors)

    def _init_priors(self, priors):
        for head, p in LOOP:
            head.bias[0] -= 2.0

    def forward(self, x):
        return [h(x) for h in self.heads]


def main():
    torch.manual_seed(0)
    model = Heads(4, [3, 5], [0.1, 0.3])
    x = torch.randn(6, 4)
    loss = sum(o.pow(2).mean() for o in model(x))
    loss.backward()
    return [p.grad for p in model.parameters()] + [p.detach() for p in model.parameters()]


if __name__ == "__main__":
    main()
"""
WRITE_LINE = 9
HEADS_ZIP = HEADS.replace("LOOP", "zip(self.heads, priors)")
HEADS_ENUMERATE = HEADS.replace("for head, p in LOOP:", "for i, head in enumerate(self.heads):")
HEADS_PLAIN = HEADS.replace("for head, p in LOOP:", "for head in self.heads:")


def _raises_leaf_error(source: str) -> bool:
    try:
        run(source)
    except RuntimeError as error:
        return "leaf Variable that requires grad" in str(error)
    return False


def _hazards(body: str):
    return [m for m in marks(body) if m[1] == WRITE_LINE and m[0] == "IPF105"]


def test_a_parameter_reached_through_a_loop_over_a_module_list_is_proven_and_wrapped():
    for body in (HEADS_ZIP, HEADS_ENUMERATE, HEADS_PLAIN):
        assert _raises_leaf_error(HEADER + body)
        found = _hazards(body)
        assert found and found[0][2] == "safe", marks(body)
        result = fixed(body)
        assert "with torch.no_grad():" in result, result
        lines = body.splitlines()
        wrapped = "\n".join(lines[:WRITE_LINE - 1]) + "\n            with torch.no_grad():\n    " + \
            lines[WRITE_LINE - 1] + "\n" + "\n".join(lines[WRITE_LINE:]) + "\n"
        got, want = run(result), run(HEADER + wrapped)
        assert len(got) == len(want)
        assert all(torch.equal(g, w) for g, w in zip(got, want))


UNDER_NO_GRAD = HEADS_ZIP.replace("        self._init_priors(priors)\n",
                                  "        with torch.no_grad():\n            self._init_priors(priors)\n")
PLAIN_LIST = HEADS_ZIP.replace("nn.ModuleList(nn.Linear(d, k) for k in sizes)",
                               "[nn.Linear(d, k) for k in sizes]")
OTHER_SIDE = HEADS.replace("LOOP", "zip(priors, self.heads)")
APPENDED = HEADS_ZIP.replace("        self._init_priors(priors)\n",
                             "        self.heads.append(nn.Identity())\n        self._init_priors(priors)\n")
FROZEN = HEADS_ZIP.replace("        self._init_priors(priors)\n",
                           "        self.heads[0].bias.requires_grad_(False)\n        self._init_priors(priors)\n")


def test_a_loop_the_analysis_cannot_show_proves_nothing():
    assert not _raises_leaf_error(HEADER + UNDER_NO_GRAD)
    assert not _hazards(UNDER_NO_GRAD)
    for name, body in (("plain-list", PLAIN_LIST), ("other-side", OTHER_SIDE)):
        assert not _hazards(body), (name, marks(body))
    for name, body in (("frozen", FROZEN), ("appended", APPENDED)):
        found = [m for m in marks(body) if m[1] == WRITE_LINE + 1 and m[0] == "IPF105"]
        assert not found, (name, marks(body))
