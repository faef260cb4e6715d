"""Repair: locate each conflict, apply only the fix it needs, verify, and repeat.

A blanket rewrite of every in-place op costs memory (in-place ReLUs exist to save it) and makes
big diffs. ``repair`` changes only culprit lines. For each conflict the locator names, the
candidate fixes, in order of preference:

1. an in-place module (``nn.ReLU(inplace=True)``) is fixed where it was built (IPF002);
2. the static passes' own fix, when it is safe (no other holder of the tensor sees a rebind);
3. ``.clone()`` where an out-of-place op saved the tensor: of its output
   (``torch.sigmoid(z).clone()``) or of the input it saved (``d.clone() @ w``), which rebinds
   nothing and cannot change a value;
4. the passes' fix when it is unsafe only for reasons the run has ruled out (the target was a
   tensor; every in-place op on that line, a whole chain included, had operands of the
   target's dtype);
5. the passes' unsafe fix (one that rebinds the aliases too: ``d = b = d * 5``), which the
   verification must then prove.

Conflicts no rewrite can fix (an optimizer step under a retained graph, an ``inplace`` flag
switched on at run time) are explained, with both lines, and left alone. A write to a view
PyTorch refuses to modify in place gets IPF006's fix (write into a copy), verified against
the writes-into-copies reference (``view_copies``).

One fix can reveal the next conflict, so this runs again until backward succeeds, then proves
the result with :func:`codemod.runtime.verify.verify`. When that verification fails, every
conflict moves on to its next candidate and the whole repair runs again (at most
``max_attempts`` times). Nothing that did not verify is ever written (the CLI's ``--write``).
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib
from typing import Dict, List, Optional, Tuple

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider

from codemod.config import Settings
from codemod.encoding import encode_source
from codemod.engine.fileio import Snapshot
from codemod.engine.diffs import unified_diff
from codemod.engine.pipeline import FileResult, apply_fixes, process_source
from codemod.findings import Fix, Status
from codemod.fixes.edits import ensure_import, wrap_run_in_with
from codemod.runtime.harness import HarnessError, parse_target, read_target, target_text
from codemod.runtime.locate import Conflict, LocateResult, locate_target
from codemod.runtime.verify import VerifyResult, verify

# Unsafe for reasons a run can rule out: it saw a tensor, and (with same_dtypes) no promotion.
_RUNTIME_SETTLES = {"unknown-type", "dtype-promotion"}


@dataclasses.dataclass
class RepairStep:
    conflict: Conflict
    action: str  # what was done, or why nothing was
    attempt: int = 1


@dataclasses.dataclass
class Attempt:
    """One full repair (locate, fix, repeat) and its verification."""

    repaired: str
    steps: List[RepairStep]
    verification: Optional[VerifyResult]


@dataclasses.dataclass
class RepairResult:
    target: str
    original: str
    repaired: str
    steps: List[RepairStep]
    rounds: int
    verification: Optional[VerifyResult]
    located: List[LocateResult]
    attempts: List[Attempt] = dataclasses.field(default_factory=list)
    read: Optional[Snapshot] = None  # the file as read: its encoding and BOM, and whether it changed since

    @property
    def repaired_bytes(self) -> bytes:
        """The repaired text in the file's own encoding (cookie, BOM); line endings as read."""
        return encode_source(self.repaired, like=self.read.data if self.read else b"")

    @property
    def changed(self) -> bool:
        return self.repaired != self.original

    @property
    def verified(self) -> bool:
        return self.verification is not None and self.verification.verified

    @property
    def unlocated(self) -> Optional[str]:
        """The program still dies with an in-place error the locator could not place."""
        last = self.located[-1] if self.located else None
        return None if last is None else last.unseen

    @property
    def nothing_to_do(self) -> bool:
        """No conflict and no in-place error: exit 0 without a change."""
        return not self.changed and not self.steps and self.unlocated is None


def _key(conflict: Conflict) -> tuple:
    return (conflict.kind, conflict.mutation and conflict.mutation.line, conflict.save and conflict.save.line)


def repair(target: str, settings: Optional[Settings] = None, max_rounds: int = 8,
           devices=None, init_kwargs=None, input_shapes=None, timeout: Optional[float] = None,
           inputs_require_grad: bool = False, max_attempts: int = 3) -> RepairResult:
    settings = settings or Settings()
    spec = parse_target(target, init_kwargs, input_shapes, inputs_require_grad)
    read = read_target(spec.path)
    original = target_text(spec.path, read.data)  # line endings kept: a write changes only fixed lines
    options = dict(init_kwargs=init_kwargs, input_shapes=input_shapes, inputs_require_grad=inputs_require_grad)
    if timeout is not None:
        options["timeout"] = timeout
    prefer: Dict[tuple, int] = {}
    attempts: List[Attempt] = []
    located: List[LocateResult] = []
    rounds = 0
    for attempt in range(1, max_attempts + 1):
        source, steps, more_choices = original, [], False
        for rounds in range(1, max_rounds + 1):
            result = locate_target(target, source=source, **options)
            located.append(result)
            if not result.conflicts:
                break
            new_source, round_steps, more = _repair_round(source, spec.path, result.conflicts, settings,
                                                          prefer, attempt, read.data)
            steps += round_steps
            more_choices = more_choices or more
            if new_source == source:
                break
            source = new_source
        verification = None
        if source != original:
            verification = verify(target, rewritten_source=source, settings=settings, devices=devices, **options)
        attempts.append(Attempt(source, steps, verification))
        if verification is None or verification.verified or not more_choices:
            break
        for step in steps:  # the next candidate for every conflict
            prefer[_key(step.conflict)] = prefer.get(_key(step.conflict), 0) + 1
    last = attempts[-1]
    return RepairResult(target, original, last.repaired, last.steps, rounds, last.verification, located, attempts,
                        read)


def first_choice(source: str, path: pathlib.Path, conflicts: List[Conflict],
                 settings: Settings) -> Tuple[str, List[RepairStep]]:
    """(the source with the first-choice fix of each conflict, the steps): what ``repair``
    tries first, for front ends that only show the fix (``run``, the pytest plugin, the magic)."""
    fixed, steps, _ = _repair_round(source, path, conflicts, settings, {}, 1)
    return fixed, steps


def _repair_round(source: str, path: pathlib.Path, conflicts: List[Conflict], settings: Settings,
                  prefer: Dict[tuple, int], attempt: int, like: bytes = b"") -> Tuple[str, List[RepairStep], bool]:
    """(the source with one fix per conflict, the steps, whether any conflict has a candidate
    left for a later attempt)."""
    # The run already knows which ops conflict: every candidate is considered, hazard or not.
    # The text is analysed as the file's bytes would be (its cookie names the encoding).
    analysed = process_source(encode_source(source, like), str(path), dataclasses.replace(settings, select=("ALL",)),
                              build_fixes=True)
    if analysed.error is not None:
        raise HarnessError(f"{path}: {analysed.error.message}")
    fixes, steps, used, more = [], [], set(), False
    for conflict in conflicts:
        candidates, why_none = _candidates(conflict, analysed, path)
        if not candidates:
            steps.append(RepairStep(conflict, why_none, attempt))
            continue
        index = min(prefer.get(_key(conflict), 0), len(candidates) - 1)
        more = more or index < len(candidates) - 1
        fix, action = candidates[index]
        steps.append(RepairStep(conflict, action, attempt))
        if id(fix.node) not in used:
            used.add(id(fix.node))
            fixes.append(fix)
    if not fixes:
        return source, steps, more
    apply_fixes(analysed, fixes)
    if analysed.error is not None:
        raise HarnessError(f"{path}: {analysed.error.message}")
    return (analysed.fixed if analysed.changed else source), steps, more


def _same_file(site, path: pathlib.Path) -> bool:
    return site is not None and pathlib.Path(site.file).resolve() == path.resolve()


def _candidates(conflict: Conflict, analysed: FileResult, path: pathlib.Path) -> Tuple[List[Tuple[Fix, str]], str]:
    """The fixes for one conflict, best first, each with a sentence saying what it is; or
    no fix and why."""
    if conflict.kind == "view":
        return _view_candidates(conflict, analysed, path)
    if conflict.kind in ("optimizer-step", "runtime-inplace-flag"):
        return [], f"not fixable by a rewrite: {conflict.message or conflict.kind}"
    if conflict.kind == "leaf":
        found, why = _leaf_candidates(conflict, analysed, path)
        return found + _copy_meaning_candidates(conflict, analysed, path, found), why
    site = conflict.fix_site
    if not _same_file(site, path):
        return [], "the line to fix is outside the target's file"
    finding = _finding_at(analysed, site, conflict)
    found: List[Tuple[Fix, str]] = []
    if finding is not None and finding.status is Status.SAFE:
        found.append((finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title}"))
    if (conflict.construct is None and conflict.kind == "saved-then-modified"
            and _same_file(conflict.save, path) and not conflict.save_op.endswith("_")):
        # Cloning what an out-of-place op saved cannot change a value (an in-place op's
        # result is another name's tensor: a clone there would cut that alias).
        fix = _clone_at_save(conflict, analysed)
        if fix is not None:
            found.append((fix, f"clone at the save site, line {conflict.save.line}: {fix.title}"))
    if finding is not None and finding.status is Status.UNSAFE:
        if finding.reason in _RUNTIME_SETTLES and (finding.reason != "dtype-promotion" or conflict.same_dtypes):
            found.append((finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title} "
                                       f"(unsafe statically: {finding.reason}; the run settles it)"))
        else:
            found.append((finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title} "
                                       f"(unsafe: {finding.reason}; checked by the verification below)"))
    return found, f"no rewrite found for line {site.line}; fix by hand"


# ------------------------------------------------------------------ leaf errors (IPF005)
_LEAF_CODES = ("IPF005", "IPF105")


def _leaf_candidates(conflict: Conflict, analysed: FileResult,
                     path: pathlib.Path) -> Tuple[List[Tuple[Fix, str]], str]:
    """A leaf error's fixes, best first: IPF005's fix whose statements cover the failing line, or
    (walking the conflict's frames outward) the call of the helper it runs in; where the rule has
    none, a ``with torch.no_grad():`` around the call of that helper, then around the failing
    statement itself (the run proved the target requires grad, which the rule could not see).
    Where IPF005 says the leaf is read again afterwards ("update a copy"), its fix only: a
    ``no_grad`` wrap there would be verified against a meaning the code may not have."""
    sites = [s for s in (conflict.mutation, *conflict.callers) if _same_file(s, path)]
    if not sites:
        return [], "the line to fix is outside the target's file"
    found: List[Tuple[Fix, str]] = []
    for site in sites:
        leaf = [f for f in analysed.findings if f.code in _LEAF_CODES and f.span.line <= site.line <= f.span.end_line]
        fixed = [f for f in leaf if f.fix is not None and f.status in (Status.SAFE, Status.UNSAFE)]
        if fixed:
            finding = min(fixed, key=lambda f: abs(f.span.column - (site.column or 0)))
            how = "" if finding.status is Status.SAFE else f" (unsafe: {finding.reason}; checked by the verification below)"
            if finding.reason == "leaf-read-after":
                how = (" (unsafe: leaf-read-after: the \"update a copy\" meaning; verified only where it "
                       "agrees with the no-grad reference on everything compared)")
            where = "" if site is conflict.mutation else f", around the call at line {site.line}"
            found.append((finding.fix, f"{finding.code} at line {finding.span.line}{where}: {finding.fix.title}{how}"))
            break
        if any(f.reason == "leaf-read-after" for f in leaf):
            return found, (f"line {site.line} updates a leaf that is read again afterwards: it means "
                           "\"update a copy\" (IPF005 says how); fix by hand")
    if found:
        return found, ""
    outer = sites[1:2] + sites[:1] if sites[0] is conflict.mutation else sites[:1]
    for site in outer:
        fix = _no_grad_wrap(analysed, site)
        if fix is not None:
            where = "the failing statement" if site is conflict.mutation else "the call of the helper"
            found.append((fix, f"{fix.title} around {where}, line {site.line} (not IPF005's: checked by "
                               "the verification below)"))
    return found, f"no rewrite found for line {conflict.mutation.line if conflict.mutation else '?'}; fix by hand"


def _copy_meaning_candidates(conflict: Conflict, analysed: FileResult, path: pathlib.Path,
                             found: List[Tuple[Fix, str]]) -> List[Tuple[Fix, str]]:
    """Last, the out-of-place form the passes offer at the failing statement (``y = F.relu(x)``,
    ``embeds = embeds + ...``): the copy meaning, which the verification takes as the
    reference where the program differentiates through the update (its right-hand side
    requires grad, or the gradient the program reads goes through it)."""
    site = conflict.mutation
    if not _same_file(site, path):
        return []
    finding = _finding_at(analysed, site, conflict)
    if finding is None or finding.code in _LEAF_CODES or any(fix is finding.fix for fix, _ in found):
        return []
    return [(finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title} (the copy meaning: "
                          "checked by the verification below)")]


def _no_grad_wrap(analysed: FileResult, site) -> Optional[Fix]:
    """``with torch.no_grad():`` around the statement of ``site``'s line (the innermost one in
    an indented block), adding ``import torch`` where the module does not import it."""
    wrapper = analysed.wrapper
    if wrapper is None:
        return None
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    best = None
    for node, rng in positions.items():
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) \
                and rng.start.line <= site.line <= rng.end.line \
                and isinstance(parents.get(node), (cst.IndentedBlock, cst.Module)) \
                and (best is None or rng.start.line >= best[1].start.line and rng.end.line <= best[1].end.line):
            best = (node, rng)
    if best is None or isinstance(best[0], (cst.FunctionDef, cst.ClassDef)):
        return None
    stmt = best[0]
    block = parents[stmt]
    name = _torch_name(analysed.original or "")
    context = f"{name or 'torch'}.no_grad()"
    also: Tuple[Fix, ...] = ()
    if name is None:
        also = (Fix(wrapper.module, lambda m: ensure_import(m, "torch"), "Add `import torch`", order=-1),)
    index = list(block.body).index(stmt)
    return Fix(block, lambda b: wrap_run_in_with(b, [stmt], context, index), f"Wrap in `with {context}:`",
               order=index, also=also)


def _torch_name(source: str) -> Optional[str]:
    """The name a module-level ``import torch`` (or ``import torch as t``) binds, if any."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name == "torch":
                    return alias.asname or "torch"
    return None


# ------------------------------------------------------------------ view errors (IPF006)
def _view_candidates(conflict: Conflict, analysed: FileResult, path: pathlib.Path) -> Tuple[List[Tuple[Fix, str]], str]:
    """A view PyTorch refuses to modify in place: IPF006's fix (write into a copy) at the
    write, safe or not; the verification (writes into copies) decides, and says ``unproven``
    where the tensor viewed is read after the write."""
    site = conflict.mutation
    if not _same_file(site, path):
        return [], "the write is outside the target's file"
    views = [f for f in analysed.findings if f.code in ("IPF006", "IPF106") and f.fix is not None
             and f.span.line <= site.line <= f.span.end_line and f.status in (Status.SAFE, Status.UNSAFE)]
    if not views:
        made = f" (the view was made at line {conflict.created.line})" if conflict.created else ""
        return [], f"no rewrite found for the write at line {site.line}{made}; fix by hand"
    column = site.column or 0
    finding = min(views, key=lambda f: abs(f.span.column - column))
    note = "" if finding.status is Status.SAFE else f" (unsafe: {finding.reason}; checked by the verification below)"
    return [(finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title}{note}")], ""


def _finding_at(analysed: FileResult, site, conflict: Conflict):
    """The finding with a fix on the site's line (nearest the site's column)."""
    on_line = [
        f for f in analysed.findings
        if f.fix is not None and f.span.line <= site.line <= f.span.end_line
        and f.status in (Status.SAFE, Status.UNSAFE)
    ]
    if conflict.construct is not None:
        on_line = [f for f in on_line if f.code in ("IPF002", "IPF102", "IPF202")]
    if not on_line:
        return None
    column = site.column or 0
    return min(on_line, key=lambda f: abs(f.span.column - column))


def _clone_at_save(conflict: Conflict, analysed: FileResult) -> Optional[Fix]:
    """``.clone()`` the saved tensor where it is made: the op's output, or the saved input."""
    save = conflict.save
    if save.column is None or save.end_column is None:
        return None
    wrapper = analysed.wrapper
    positions = wrapper.resolve(PositionProvider)
    lines = analysed.original.splitlines()
    start = _char_column(lines, save.line, save.column)
    end = _char_column(lines, save.end_line or save.line, save.end_column)
    expr = None
    for node, rng in positions.items():
        if isinstance(node, cst.BaseExpression) and (rng.start.line, rng.start.column, rng.end.line, rng.end.column) == (
            save.line, start, save.end_line or save.line, end
        ):
            expr = node
            break
    if expr is None:
        return None
    target = expr
    if conflict.saved_as.startswith("input "):
        target = _input_expression(expr, int(conflict.saved_as.split()[1]))
        if target is None:
            return None
    cloned = clone_of(target)
    return Fix(target, lambda node: clone_of(node), f"Rewrite as `{cst.Module([]).code_for_node(cloned)}`")


def _input_expression(expr: cst.BaseExpression, index: int) -> Optional[cst.BaseExpression]:
    """The expression for input ``index`` of the op that ``expr`` calls."""
    if isinstance(expr, cst.BinaryOperation):
        return (expr.left, expr.right)[index] if index < 2 else None
    if isinstance(expr, cst.Call):
        positional = [a.value for a in expr.args if a.keyword is None and not a.star]
        if isinstance(expr.func, cst.Attribute) and not _looks_like_namespace(expr.func.value):
            positional = [expr.func.value] + positional  # a method: the receiver is input 0
        return positional[index] if index < len(positional) else None
    return None


def _looks_like_namespace(node: cst.BaseExpression) -> bool:
    """``torch.matmul(d, w)``, ``F.linear(x, w)``, ``self.fc(x)``: not a tensor method call."""
    name = node
    while isinstance(name, cst.Attribute):
        name = name.value
    return isinstance(name, cst.Name) and name.value in ("torch", "F", "nn", "self", "functional")


def clone_of(expr: cst.BaseExpression) -> cst.BaseExpression:
    needs_parens = not expr.lpar and not isinstance(
        expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.Integer, cst.Float)
    )
    inner = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if needs_parens else expr
    return cst.Call(func=cst.Attribute(value=inner, attr=cst.Name("clone")))


def _char_column(lines: List[str], line: int, byte_column: int) -> int:
    """CPython gives UTF-8 byte columns; libcst counts characters."""
    if not 1 <= line <= len(lines):
        return byte_column
    return len(lines[line - 1].encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))


def render(result: RepairResult) -> str:
    out = []
    for attempt in result.attempts[:-1]:
        verdict = attempt.verification.verdict.value if attempt.verification else "no change"
        out.append(f"attempt {attempt.steps[0].attempt if attempt.steps else '?'}: {verdict}; "
                   "trying the next candidate fix for each conflict")
    for i, step in enumerate(result.steps, 1):
        c = step.conflict
        where = f"line {c.mutation.line}" if c.mutation else "?"
        saved = f", saved at line {c.save.line}" if c.save else ""
        out.append(f"{i}. {c.kind} at {where}{saved}: {step.action}")
    if result.unlocated:
        last = result.located[-1]
        out.append(f"The program still dies with an in-place error that was not located: {result.unlocated}.")
        out.append(f"  ({last.error})")
    elif not result.steps:
        out.append("No in-place conflicts found: nothing to repair.")
    return "\n".join(out)


def diff(result: RepairResult, path_label: str) -> str:
    return unified_diff(path_label, result.original, result.repaired)
