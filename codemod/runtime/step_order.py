"""Repair of step-order conflicts: an optimizer step between a forward and its backward.

The locator names these conflicts (kind ``optimizer-step``: a step changed in place a parameter
that a live graph saved). No rewrite of an in-place op fixes them; the statements must change
order, and that chooses what the later loss's gradients mean:

- **as computed** (what is built here): the gradients through the values the later loss's
  forward really used, before the step changed them; the snapshot oracle of ``verify``
  (``references``) computes exactly these, so a rewrite is proven against it. The rewrites
  (``codemod.fixes.step_order``): the step moved after the later ``backward()``, restricted to
  the parameters its own optimizer updates; or the later gradients taken with
  ``torch.autograd.grad`` before the step and added to ``.grad`` where the backward was.
- **recompute** (``--meaning recompute``): differentiate through the updated parameters: the
  statements that build the later loss, from the stepped module's call onward, run again right
  before its ``backward()`` (the usual GAN recipe; ``codemod.fixes.step_recompute``), verified
  against the original run with that part of the forward run again after the step
  (``runtime.recompute``), never against the rewrite itself.

Never ``retain_graph=True`` as a fix, a ``.detach()`` that cuts a module off, or zeroed
gradients: none of the rewrites adds one. Each is unsafe (it picks a meaning) and is written
only once it is verified.
"""

from __future__ import annotations

import os
from typing import List, Optional, Sequence, Tuple

from codemod.findings import Fix
from codemod.fixes import step_order, step_recompute
from codemod.fixes.from_run import Positions
from codemod.runtime.locate import Conflict, Site

def fix_site(conflict: Conflict, site: Optional[Site]) -> Optional[Site]:
    """Where a step-order fix goes: the step's line; where the step is in a helper of another
    file than the forward that saved the parameter (``update_params(optim, loss)``), the call of
    that helper in the forward's file."""
    if conflict.kind != "optimizer-step" or site is None or conflict.save is None:
        return site
    if os.path.realpath(site.file) == os.path.realpath(conflict.save.file):
        if _in_function_of(site, conflict.save.line):
            return site
        # The parameter was saved by a module of this file, but the forward ran in a caller of
        # the step's helper (``update_params(optim, loss)`` called from another file's
        # ``learn()``): the fix goes around that call, where the forward and the backward are.
        return next((c for c in conflict.callers if os.path.realpath(c.file) != os.path.realpath(site.file)),
                    site)
    return next((c for c in conflict.callers if os.path.realpath(c.file) == os.path.realpath(conflict.save.file)),
                site)


def _in_function_of(site: Site, line: int) -> bool:
    """Whether ``line`` is in the function (or the module level) that holds ``site``'s line; True
    where the file cannot be read or parsed (the step's own file stays the place)."""
    import ast

    try:
        with open(site.file, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return True

    def holder(at: int):
        best = None
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.lineno <= at <= (node.end_lineno or node.lineno):
                if best is None or node.lineno >= best.lineno:
                    best = node
        return best

    return holder(site.line) is holder(line)


MEANING = ("meaning: as computed (the later loss's gradients through the values its forward used, "
           "before the step; to differentiate through the updated parameters instead, run that "
           "forward again after the step)")


def candidates(where: Optional[Positions], step_line: Optional[int],
               confirmed: bool = True, callers: Sequence[int] = ()) -> Tuple[List[Tuple[Fix, str]], str]:
    """(fix, what it does) for a step-order conflict whose step is at ``step_line`` of the file
    ``where`` holds, best first; or none and why. ``callers``: lines of this file that called
    the function holding the step (the wraps around them come last). ``confirmed``: a backward failed on it (an
    unconfirmed one is a graph still alive across the step that no backward used after it)."""
    if not confirmed:
        return [], ("a live graph saved a parameter this step changed, but no backward used it after "
                    "the step: nothing to fix unless one does")
    if where is None:
        return [], "not fixable by a rewrite here: libcst cannot parse the file"
    out: List[Tuple[Fix, str]] = []
    found = step_order.plans(where, step_line)
    for line in callers:  # the forward may be in a caller: wrap around the call that leads to the step
        found += step_order.wraps_around(where, line)
    for plan in found:
        try:
            fix = step_order.fix(where, plan)
        except Exception:  # a plan that cannot be built is no candidate
            continue
        out.append((fix, f"step order: {plan.title} ({MEANING})"))
    if not out:
        return [], ("no step-order rewrite found (the step and the backward are not in one block, or the "
                    "loss is rebuilt between them): run backward before optimizer.step(), or run the "
                    "forward again after it")
    return out, ""


MEANINGS = ("as-computed", "recompute")

MEANING_RECOMPUTE = ("meaning: recompute (the later loss's gradients through the updated parameters: the "
                     "forward through the stepped module runs again after the step; the default, as computed, "
                     "keeps the values the forward used instead)")


def recompute_candidates(where: Optional[Positions], step_line: Optional[int], confirmed: bool = True,
                         save_lines: Sequence[int] = (), backward_lines: Sequence[int] = ()
                         ) -> Tuple[List[Tuple[Fix, str]], str]:
    """(fix, what it does) for a step-order conflict in the recompute meaning; or none and why.
    ``save_lines``: this file's lines where the run saw the stepped parameter saved;
    ``backward_lines``: those of the frames of the backward that failed on it."""
    if not confirmed:
        return [], ("a live graph saved a parameter this step changed, but no backward used it after "
                    "the step: nothing to fix unless one does")
    if where is None:
        return [], "not fixable by a rewrite here: libcst cannot parse the file"
    found, why = step_recompute.plans(where, step_line, save_lines, backward_lines)
    out: List[Tuple[Fix, str]] = []
    for plan in found:
        try:
            fix = step_recompute.fix(where, plan)
        except Exception:  # a plan that cannot be built is no candidate
            continue
        out.append((fix, f"step order: {plan.title} ({MEANING_RECOMPUTE})"))
    if not out:
        return [], f"no recompute rewrite: {why}; `--meaning as-computed` (the default) may still apply"
    return out, ""
