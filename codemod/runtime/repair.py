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
   verification must then prove;
6. fixes built from what the run saw at the lines it names, whether or not a rule fired there
   (``fixes.from_run``): the writing statement out-of-place or writing into a copy; where a
   refused view was made, ordinary views, copies, or a detached view (made under ``no_grad``);
   the module built without ``inplace=True``. Fewest lines changed first.

A candidate that leaves its conflict in place (the next run locates it again) is undone and the
conflict's next candidate taken at once; one that does not verify gives way to the next at the
next attempt. The lines to fix may be in any file of the target's project (its folder tree, the
folder above its package), never in an installed package unless ``allow_outside`` names its
folder: the runs import the rewritten files from memory, and the CLI writes every changed file
or none. A file libcst cannot parse (tabs under spaces) is fixed by statement
(``fixes.regions``), every byte outside the edit kept.

An optimizer step between a forward and its backward gets the step-order rewrites of
``runtime.step_order`` (the "as computed" meaning, verified against the snapshot oracle; a
graph reused across steps or calls too, under a wrap that holds the loop or the call).
Conflicts no rewrite can fix (an ``inplace`` flag switched on at run time) are explained, with
both lines, and left alone. A write to a view
PyTorch refuses to modify in place gets IPF006's fix (write into a copy), verified against
the writes-into-copies reference (``view_copies``).

One fix can reveal the next conflict, so this runs again until backward succeeds, then proves
the result with :func:`codemod.runtime.verify.verify`. One fix can remove a later conflict too:
a tensor saved once and written by several lines is fixed at its first write first
(:func:`after_earlier_write`). When that verification fails, every
conflict moves on to its next candidate and the whole repair runs again (at most
``max_attempts`` times); an attempt that ends with an earlier one's texts is not verified again,
and the next candidates are taken while any is left. Nothing that did not verify is ever written (the CLI's ``--write``).
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import itertools
import os
import pathlib
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from codemod.config import Settings
from codemod.encoding import encode_source, encode_text
from codemod.engine.fileio import Snapshot
from codemod.engine.diffs import unified_diff
from codemod.engine.pipeline import FileResult, apply_fixes, process_source
from codemod.findings import Fix, Status
from codemod.fixes import from_run
from codemod.fixes.apply import FixApplier
from codemod.fixes.apply import parse as parse_for_fixing
from codemod.fixes.edits import ensure_import, join_with_before, wrap_run_in_with
from codemod.fixes.from_run import Positions
from codemod.fixes.regions import Region, regions
from codemod.runtime.harness import HarnessError, parse_target, read_target, target_text
from codemod.runtime import step_order
from codemod.runtime.dead_rebinding import DeadRebindings
from codemod.runtime.step_order import MEANINGS
from codemod.runtime.locate import Conflict, LocateResult, Site, locate_target
from codemod.runtime.references import RESHAPES
from codemod.runtime.verify import Verdict, VerifyResult, verify

# Unsafe for reasons a run can rule out: it saw a tensor, and (with same_dtypes) no promotion.
_RUNTIME_SETTLES = {"unknown-type", "dtype-promotion"}


@dataclasses.dataclass
class RepairStep:
    conflict: Conflict
    action: str  # what was done, or why nothing was
    attempt: int = 1
    tried: List[str] = dataclasses.field(default_factory=list)  # the candidates before this one (earlier attempts)
    candidates: int = 0  # how many there were
    refused: List[str] = dataclasses.field(default_factory=list)  # run-made rewrites refused, and why


@dataclasses.dataclass
class Attempt:
    """One full repair (locate, fix, repeat) and its verification."""

    repaired: str
    steps: List[RepairStep]
    verification: Optional[VerifyResult]
    rejected: List[str] = dataclasses.field(default_factory=list)  # candidates undone: the conflict stayed
    others: List["OtherFile"] = dataclasses.field(default_factory=list)  # other project files changed


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
    others: List["OtherFile"] = dataclasses.field(default_factory=list)  # other project files repaired
    project: Optional["Project"] = None

    @property
    def repaired_bytes(self) -> bytes:
        """The repaired text in the file's own encoding (cookie, BOM); line endings as read."""
        return encode_source(self.repaired, like=self.read.data if self.read else b"")

    @property
    def changed(self) -> bool:
        return self.repaired != self.original or bool(self.others)

    @property
    def verified(self) -> bool:
        return self.verification is not None and self.verification.verified

    @property
    def unlocated(self) -> Optional[str]:
        """The program still dies with an in-place error the locator could not place."""
        last = self.located[-1] if self.located else None
        return None if last is None else last.unseen

    @property
    def failed_otherwise(self) -> Optional[str]:
        """The run died of another error before any conflict showed (a missing module): what hid them."""
        last = self.located[-1] if self.located else None
        if last is None or self.steps or self.unlocated is not None:
            return None
        return last.error or None

    @property
    def nothing_to_do(self) -> bool:
        """No conflict and no in-place error in a run that ran: exit 0 without a change."""
        return not self.changed and not self.steps and self.unlocated is None and self.failed_otherwise is None


def _exact(conflict: Conflict) -> tuple:
    """The key, and which tensor of the line was saved (an op on one line may save several)."""
    return _key(conflict) + (conflict.saved_as, conflict.save_op, conflict.save and conflict.save.column,
                             conflict.mutation and conflict.mutation.column)


def _exact_before(conflict: Conflict, maps: Dict[str, Dict[int, int]]) -> tuple:
    """:func:`_exact` with the lines of a file a round edited taken back to that file's lines
    before the edit (``_line_maps``): a fix that inserts a line above its write (``x = x.clone()``)
    and leaves the conflict in place is seen to leave it, although the write's line moved."""
    def back(site: Optional[Site]) -> Optional[Site]:
        shift = maps.get(str(pathlib.Path(site.file).resolve())) if site is not None else None
        if shift is None:
            return site
        return dataclasses.replace(site, line=shift.get(site.line, -site.line))

    return _exact(dataclasses.replace(conflict, mutation=back(conflict.mutation), save=back(conflict.save),
                                      construct=back(conflict.construct)))


def _line_maps(before: Dict[str, str], after: Dict[str, str]) -> Dict[str, Dict[int, int]]:
    """For each file a round only added lines to (``x = x.clone()`` above a write): its lines
    now -> the same lines before (an added line has none). A file whose lines were rewritten or
    moved (a step-order rewrite) keeps its line numbers as they are: a moved statement's conflict
    is another conflict."""
    maps: Dict[str, Dict[int, int]] = {}
    for path, text in after.items():
        old = before.get(path)
        if old is None or old == text:
            continue
        codes = difflib.SequenceMatcher(None, old.splitlines(), text.splitlines(), autojunk=False).get_opcodes()
        if all(tag in ("equal", "insert") for tag, *_ in codes):
            maps[path] = {j + 1: i + 1 for tag, i1, i2, j1, j2 in codes if tag == "equal"
                          for i, j in zip(range(i1, i2), range(j1, j2))}
    return maps


def _key(conflict: Conflict) -> tuple:
    """Which write, save and (for a module's in-place op) constructor: the layers of one
    ``nn.Sequential`` share the call line of their writes and saves, not their constructors."""
    return (conflict.kind, conflict.mutation and (conflict.mutation.file, conflict.mutation.line),
            conflict.save and (conflict.save.file, conflict.save.line),
            conflict.construct and (conflict.construct.file, conflict.construct.line))


def after_earlier_write(conflicts: List[Conflict]) -> List[Conflict]:
    """The conflicts to fix later: a saved tensor written by several lines is fixed at the write
    that came first in the run (the smallest version after it), and the next run says whether the
    later writes still reach it. Written out of place, the first write hands a fresh tensor to the
    later ones (a pre-activation block's in-place ReLU on its input, whose skip reads the
    activated input: a fix there would change what the skip adds)."""
    first: Dict[tuple, int] = {}

    def tensor(c: Conflict) -> Optional[tuple]:
        if c.kind != "saved-then-modified" or c.save is None or c.mutation is None:
            return None
        return (c.save.file, c.save.line, c.save.column, c.save_op, c.saved_as, c.version_saved, tuple(c.shape))

    for c in conflicts:
        key = tensor(c)
        if key is not None:
            first[key] = min(first.get(key, c.version_now), c.version_now)
    lines = {(tensor(c), c.mutation.file, c.mutation.line) for c in conflicts
             if tensor(c) is not None and c.version_now == first[tensor(c)]}
    return [c for c in conflicts if tensor(c) is not None and c.version_now > first[tensor(c)]
            and (tensor(c), c.mutation.file, c.mutation.line) not in lines]


class Project:
    """The files a repair may change: the target's folder tree (and the folder above its
    package, where it is in one; the working folder where it is under it), never an installed
    package or a virtual environment, unless a folder given as ``allow_outside`` holds it."""

    def __init__(self, target: pathlib.Path, allow_outside: Sequence[str] = ()) -> None:
        folder = target.resolve().parent
        top = folder
        while (top / "__init__.py").is_file() and top.parent != top:
            top = top.parent
        self.roots = [folder, top]
        cwd = pathlib.Path.cwd().resolve()
        if folder.is_relative_to(cwd):
            self.roots.append(cwd)
        self.allowed = [pathlib.Path(p).resolve() for p in allow_outside]

    @property
    def root(self) -> pathlib.Path:
        return min(self.roots, key=lambda p: len(p.parts))

    def allows(self, file: str) -> bool:
        if file.startswith("<"):
            return False
        path = pathlib.Path(file).resolve()
        if any(path.is_relative_to(a) for a in self.allowed):
            return True
        if any(part in ("site-packages", "dist-packages", ".venv", "venv") for part in path.parts):
            return False
        return any(path.is_relative_to(r) for r in self.roots)


@dataclasses.dataclass
class OtherFile:
    """A file of the project besides the target's that the repair changed."""

    path: pathlib.Path
    original: str
    repaired: str
    read: Snapshot

    @property
    def repaired_bytes(self) -> bytes:
        return encode_source(self.repaired, like=self.read.data)


def repair(target: str, settings: Optional[Settings] = None, max_rounds: int = 8,
           devices=None, init_kwargs=None, input_shapes=None, timeout: Optional[float] = None,
           inputs_require_grad: bool = False, max_attempts: int = 6,
           allow_outside: Sequence[str] = (), meaning: str = "as-computed") -> RepairResult:
    """``allow_outside``: folders outside the target's project whose files may be changed too.
    ``meaning``: what a step-order conflict's repair means, ``as-computed`` (the gradients of the
    values the forward used; the snapshot oracle) or ``recompute`` (the forward run again after
    the step; ``runtime.recompute``): the rewrites offered and the verification's reference."""
    if meaning not in MEANINGS:
        raise HarnessError(f"unknown meaning {meaning!r}: one of {', '.join(MEANINGS)}")
    settings = settings or Settings()
    spec = parse_target(target, init_kwargs, input_shapes, inputs_require_grad)
    read = read_target(spec.path)
    original = target_text(spec.path, read.data)  # line endings kept: a write changes only fixed lines
    options = dict(init_kwargs=init_kwargs, input_shapes=input_shapes, inputs_require_grad=inputs_require_grad)
    if timeout is not None:
        options["timeout"] = timeout
    project = Project(spec.path, allow_outside)
    own = str(spec.path.resolve())
    reads: Dict[str, Tuple[Snapshot, str]] = {own: (read, original)}  # every file read: as read, its text
    prefer: Dict[tuple, int] = {}
    attempts: List[Attempt] = []
    located: List[LocateResult] = []
    rounds = 0
    seen: set = set()  # the texts each attempt ended with: one that comes again is not verified again
    for attempt in range(1, max_attempts + 1):
        texts: Dict[str, str] = {own: original}
        steps: List[RepairStep] = []
        rejected: List[str] = []
        more_choices = False
        undo: Optional[Tuple[Dict[str, str], List[RepairStep], set]] = None
        for rounds in range(1, max_rounds + 1):
            result = locate_target(target, source=texts[own], modules=_others(texts, reads, own), **options)
            located.append(result)
            if not result.conflicts:
                break
            # In the recompute meaning the step stays where it was: a graph kept alive across it
            # (``retain_graph=True`` for an earlier loss) still saved the old parameters, but no
            # backward uses it now (unconfirmed): the fix did its work.
            live = [c for c in result.conflicts
                    if meaning != "recompute" or c.kind != "optimizer-step" or c.confirmed]
            repeated = ({_exact_before(c, _line_maps(undo[0], texts)) for c in live} & undo[2]
                        if undo is not None else set())
            if undo is not None and repeated:
                # A fix left its conflict where it was: undo the round, take that conflict's next candidate.
                texts, fixed_steps, _ = undo
                undo = None
                steps = steps[: len(steps) - len(fixed_steps)]
                bumped = False
                for step in fixed_steps:
                    key = _key(step.conflict)
                    if _exact(step.conflict) in repeated:
                        rejected.append(f"{step.action}: the conflict was still there")
                        if step.candidates > prefer.get(key, 0) + 1:
                            prefer[key] = prefer.get(key, 0) + 1
                            bumped = True
                if not bumped:  # no candidate left for it: the conflicts stay, unfixed
                    steps += [dataclasses.replace(step, action=f"{step.action}: the conflict was still there; "
                                                               "no candidate left (fix by hand)")
                              if _exact(step.conflict) in repeated else step for step in fixed_steps]
                    break
                continue
            before = dict(texts)
            later = {id(c) for c in after_earlier_write(result.conflicts)}
            first = [c for c in result.conflicts if id(c) not in later]
            round_steps, keys, more = _repair_files(first, texts, reads, project, spec.path, settings,
                                                    prefer, attempt, meaning)
            if later and texts == before:  # the first writes have no fix: every write's own, now
                round_steps, keys, more = _repair_files(result.conflicts, texts, reads, project, spec.path,
                                                        settings, prefer, attempt, meaning)
            steps += round_steps
            more_choices = more_choices or more
            if texts == before:
                break
            undo = (before, round_steps, keys)
        ended = tuple(sorted(texts.items()))
        if attempts and ended in seen:
            # An earlier attempt ended with these texts (its verdict stands): not verified again.
            # Other choices may still lead elsewhere (a later round's conflict whose next
            # candidate is a wider wrap): take them, or stop where none is left.
            if not more_choices:
                break  # no candidate left that changes anything
            for step in steps:
                prefer[_key(step.conflict)] = prefer.get(_key(step.conflict), 0) + 1
            continue
        seen.add(ended)
        verification = None
        if any(texts[p] != reads[p][1] for p in texts):
            # ``meaning`` is that of step-order repairs: without a step conflict, the default reference.
            stepped = any(c.kind == "optimizer-step" for r in located for c in r.conflicts)
            verification = verify(target, rewritten_source=texts[own], settings=settings, devices=devices,
                                  modules=_others(texts, reads, own),
                                  meaning=meaning if stepped else "as-computed", **options)
        attempts.append(Attempt(texts[own], steps, verification, rejected, _changed_others(texts, reads, own)))
        if verification is None or verification.verified or not more_choices or _no_reference(verification, steps):
            break
        for step in steps:  # the next candidate for every conflict
            prefer[_key(step.conflict)] = prefer.get(_key(step.conflict), 0) + 1
    last = attempts[-1]
    return RepairResult(target, original, last.repaired, last.steps, rounds, last.verification, located, attempts,
                        read, last.others, project)


def _no_reference(verification: VerifyResult, steps: List[RepairStep]) -> bool:
    """Unproven on every device because a leaf update's meaning does not fit the original (neither
    the no-grad nor the copy meaning): those references are runs of the original alone, so no
    other rewrite can do better. (A step-order conflict changes the reference: not with one.)"""
    kinds = {step.conflict.kind for step in steps}
    return bool(verification.devices) and "leaf" in kinds and "optimizer-step" not in kinds \
        and not verification.problems and all(
            d.verdict is Verdict.UNPROVEN and any(r.startswith("no reference") and "meaning does not fit" in r
                                                  for r in d.reasons)
            for d in verification.devices if d.decides)


def _others(texts: Dict[str, str], reads: Dict[str, Tuple[Snapshot, str]], own: str) -> Dict[str, str]:
    """The other files' rewritten texts, for the runs to import instead of the files."""
    return {p: t for p, t in texts.items() if p != own and t != reads[p][1]}


def _changed_others(texts: Dict[str, str], reads: Dict[str, Tuple[Snapshot, str]], own: str) -> List[OtherFile]:
    return [OtherFile(pathlib.Path(p), reads[p][1], t, reads[p][0]) for p, t in sorted(texts.items())
            if p != own and t != reads[p][1]]


def _fix_file(conflict: Conflict, project: Project) -> Optional[str]:
    """The file a conflict's fix goes in: where the write is (or, for a module's in-place op,
    where it was built); for a leaf update outside the project, the project's call of it."""
    site = conflict.fix_site
    if conflict.kind == "runtime-inplace-flag":
        site = conflict.save  # the flag is not the line's to unset: the clone goes where the tensor was saved
    if conflict.kind == "leaf" and site is not None and not project.allows(site.file):
        site = next((s for s in conflict.callers if project.allows(s.file)), site)
    site = step_order.fix_site(conflict, site)
    if site is None:
        return None
    return site.file if site.file.startswith("<") else str(pathlib.Path(site.file).resolve())


def _repair_files(conflicts: List[Conflict], texts: Dict[str, str], reads: Dict[str, Tuple[Snapshot, str]],
                  project: Project, target: pathlib.Path, settings: Settings, prefer: Dict[tuple, int],
                  attempt: int, meaning: str = "as-computed") -> Tuple[List[RepairStep], set, bool]:
    """One round over the files that hold lines to fix: ``texts`` updated in place; (the steps,
    the keys of the conflicts given a fix, whether a later attempt has candidates left)."""
    by_file: Dict[Optional[str], List[Conflict]] = {}
    for conflict in conflicts:
        by_file.setdefault(_fix_file(conflict, project), []).append(conflict)
    steps: List[RepairStep] = []
    keys: set = set()
    more = False
    for file, group in by_file.items():
        if file is None or not project.allows(file):
            shown = file or "?"
            why = (f"the line to fix is in {shown}, outside the project ({project.root}); "
                   "`--allow-outside FOLDER` lets repair change files there")
            steps += [RepairStep(c, why, attempt) for c in group] if file is not None else \
                [RepairStep(c, _no_site(c), attempt) for c in group]
            continue
        if file not in texts:
            path = pathlib.Path(file)
            try:
                snapshot = read_target(path)
            except HarnessError as exc:
                steps += [RepairStep(c, f"cannot read {file}: {exc}", attempt) for c in group]
                continue
            reads[file] = (snapshot, target_text(path, snapshot.data))
            texts[file] = reads[file][1]
        new_text, file_steps, file_more = _repair_round(texts[file], pathlib.Path(file), group, settings, prefer,
                                                        attempt, reads[file][0].data, meaning)
        steps += file_steps
        more = more or file_more
        if new_text != texts[file]:
            texts[file] = new_text
            keys |= {_exact(s.conflict) for s in file_steps if s.candidates}
    return steps, keys, more


def _no_site(conflict: Conflict) -> str:
    if conflict.kind in ("optimizer-step", "runtime-inplace-flag"):
        return f"not fixable by a rewrite: {conflict.message or conflict.kind}"
    return "the run did not see where the line to fix is"


def first_choice(source: str, path: pathlib.Path, conflicts: List[Conflict],
                 settings: Settings, skip: Optional[Dict[str, int]] = None,
                 meaning: str = "as-computed") -> Tuple[str, List[RepairStep]]:
    """(the source with the first-choice fix of each conflict, the steps): what ``repair``
    tries first, for front ends that only show the fix (``run``, the pytest plugin, the magic).
    ``skip``: how many candidates to pass over, per conflict (by :func:`key_text`): script
    repair's next attempt after a first choice that did not verify."""
    prefer = {_key(c): (skip or {}).get(key_text(c), 0) for c in conflicts}
    fixed, steps, _ = _repair_round(source, path, conflicts, settings, prefer, 1, meaning=meaning)
    return fixed, steps


def key_text(conflict) -> str:
    """A conflict's key as text, from a :class:`Conflict` or its JSON (``dataclasses.asdict``)."""
    if isinstance(conflict, Conflict):
        return repr(_key(conflict))

    def site(s):
        return None if not s else (s["file"], s["line"])

    return repr((conflict["kind"], site(conflict.get("mutation")), site(conflict.get("save")),
                 site(conflict.get("construct"))))


@dataclasses.dataclass
class _Candidate:
    """One fix for one conflict: on the file's libcst tree, or on a region of it (``region``:
    the file does not parse with libcst as a whole)."""

    fix: Fix
    action: str
    region: Optional[Region] = None
    copy: Optional[Tuple[int, str]] = None  # a copy before the write: (id of its block, the statement)
    at_write: bool = False  # it rewrites the writing statement (or copies before it)
    no_grad: bool = False  # a `with torch.no_grad():` wrap (the no-grad meaning of a leaf update)


class _Trees:
    """libcst's tree to build fixes on at a line: the file's, or where libcst cannot parse the
    file, the smallest statement around the line that it parses (``fixes.regions``)."""

    def __init__(self, source: str, analysed: FileResult, data: bytes = b"") -> None:
        self.source = source
        # A run-made rewrite that would only rebind a name nobody reads is refused (the write was
        # the point: `for p in params: p.add_(e)`); what was refused, per conflict, and why.
        self.dead = DeadRebindings(analysed.source, data or encode_text(source))
        self.refused: Dict[int, List[str]] = {}
        self.lines = source.splitlines(keepends=True)
        self.text_lines = (analysed.original or source).splitlines()
        self.whole = Positions(analysed.wrapper) if analysed.wrapper is not None else None
        self._regions: Dict[int, List[Region]] = {}

    def at(self, line: int) -> List[Tuple[Positions, Optional[Region]]]:
        if self.whole is not None:
            return [(self.whole, None)]
        if line not in self._regions:
            self._regions[line] = list(itertools.islice(regions(self.source, line), 3))
        return [(r.where, r) for r in self._regions[line]]

    def position(self, site: Site, region: Optional[Region]) -> Tuple[int, int]:
        column = _char_column(self.text_lines, site.line, site.column or 0)
        return region.position(site.line, column) if region is not None else (site.line, column)

    def span(self, site: Site, region: Optional[Region]) -> Optional[Tuple[int, int, int, int]]:
        if site.column is None or site.end_column is None:
            return None
        start = self.position(site, region)
        end_line = site.end_line or site.line
        end = _char_column(self.text_lines, end_line, site.end_column)
        end_pos = region.position(end_line, end) if region is not None else (end_line, end)
        return (*start, *end_pos)


def _repair_round(source: str, path: pathlib.Path, conflicts: List[Conflict], settings: Settings,
                  prefer: Dict[tuple, int], attempt: int, like: bytes = b"",
                  meaning: str = "as-computed") -> Tuple[str, List[RepairStep], bool]:
    """(the source with one fix per conflict, the steps, whether any conflict has a candidate
    left for a later attempt). ``like``: the file's bytes as read (its encoding and BOM);
    without them, the encoding the text's own cookie names."""
    # The run already knows which ops conflict: every candidate is considered, hazard or not.
    # The text is analysed as the file's bytes would be (its cookie names the encoding).
    data = encode_source(source, like) if like else encode_text(source)
    analysed = process_source(data, str(path), dataclasses.replace(settings, select=("ALL",)), build_fixes=True)
    if analysed.wrapper is None and analysed.error is None:  # nothing for the rules: no `torch` in it
        try:
            analysed.wrapper = parse_for_fixing(data)
            analysed.original = analysed.original or source
        except Exception:  # libcst's grammar is not CPython's: by statement below
            pass
    if analysed.error is not None and analysed.wrapper is None and analysed.source is None:
        raise HarnessError(f"{path}: {analysed.error.message}")  # CPython does not parse it either
    trees = _Trees(source, analysed, data)
    chosen, steps, used, more = [], [], set(), False
    copies: Dict[Tuple[int, str], int] = {}
    written: set = set()  # (file, line) of writes fixed at the write in this round
    planned = []
    for conflict in conflicts:
        candidates, why_none = _candidates(conflict, analysed, path, trees, meaning)
        index = min(prefer.get(_key(conflict), 0), len(candidates) - 1) if candidates else 0
        planned.append((conflict, candidates, why_none, index))
    # By line, a fix at the write first: it may cover the write's other conflicts.
    planned.sort(key=lambda p: (p[0].mutation.line if p[0].mutation else 0,
                                not (p[1] and p[1][p[3]].at_write)))
    for conflict, candidates, why_none, index in planned:
        refused = trees.refused.get(id(conflict), [])
        if not candidates:
            told = why_none + "".join(f"; refused {r}" for r in refused)
            steps.append(RepairStep(conflict, told, attempt, refused=refused))
            continue
        more = more or index < len(candidates) - 1
        candidate = candidates[index]
        tried = [c.action for c in candidates[:index]]
        steps.append(RepairStep(conflict, candidate.action, attempt, tried, len(candidates), refused))
        write = conflict.mutation and (conflict.mutation.file, conflict.mutation.line)
        if write in written and not candidate.at_write:
            # Another conflict of this write is fixed at the write: the next run says whether it is
            # enough (then this conflict is gone; else it comes back with its own candidates).
            steps[-1] = RepairStep(conflict, f"left to the fix of the write at line {write[1]}", attempt)
            continue
        if candidate.at_write and write is not None:
            written.add(write)
        if candidate.copy is not None and candidate.copy in copies:
            steps[-1].action = f"{candidate.action}: already made for the write at line {copies[candidate.copy]}"
            continue  # an earlier write of this round, in the same block, copies the same name
        if candidate.copy is not None and conflict.mutation is not None:
            copies[candidate.copy] = conflict.mutation.line
        if id(candidate.fix.node) not in used:
            used.add(id(candidate.fix.node))
            chosen.append(candidate)
    if not chosen:
        return source, steps, more
    whole = [c.fix for c in chosen if c.region is None]
    if whole:
        apply_fixes(analysed, whole)
        if analysed.error is not None:
            raise HarnessError(f"{path}: {analysed.error.message}")
        return (analysed.fixed if analysed.changed else source), steps, more
    # By statement: one region's fix per round (the next round sees the file as it is then).
    for candidate in chosen:
        fixed = candidate.region.apply([candidate.fix], trees.lines) if candidate.region is not None else None
        if fixed is not None:
            return fixed, steps, more
    return source, steps, more


def _same_file(site, path: pathlib.Path) -> bool:
    return site is not None and pathlib.Path(site.file).resolve() == path.resolve()


def _candidates(conflict: Conflict, analysed: FileResult, path: pathlib.Path,
                trees: _Trees, meaning: str = "as-computed") -> Tuple[List[_Candidate], str]:
    """The fixes for one conflict, best first, each with a sentence saying what it is; or
    no fix and why. The static passes' fixes come first; then the fixes built from what the run
    saw at the lines it named (``fixes.from_run``), smallest change first."""
    if conflict.kind == "view":
        found, why = _view_candidates(conflict, analysed, path)
        return _with_runtime(found, _view_runtime(conflict, path, trees), trees), why
    if conflict.kind == "optimizer-step":
        return _step_order_candidates(conflict, path, trees, meaning)
    if conflict.kind == "runtime-inplace-flag":
        # No rewrite of the write's line unsets a flag switched on elsewhere; a clone of what the
        # out-of-place op saved (MVANet's `self.activation(...).clone()` before its dropout) changes no value.
        return _clones_at_save(conflict, path, trees), f"not fixable by a rewrite: {conflict.message or conflict.kind}"
    if conflict.kind == "leaf":
        found, why = _leaf_candidates(conflict, analysed, path, trees)
        found = found + _copy_meaning_candidates(conflict, analysed, path, found)
        # Then the copy meaning built from the run at the write (out of place, or a clone
        # before it), whether or not a rule fired there: the verification's reference decides.
        runtime = _statement_runtime(conflict, trees) if _same_file(conflict.mutation, path) else []
        ordered = _with_runtime(found, runtime, trees)
        # Last, the no-grad meaning where the run allows it, whether or not a rule offered it.
        ordered = _with_runtime(ordered, _no_grad_runtime(conflict, path, trees), trees)
        if conflict.operands_require_grad and not conflict.written_parameter:
            # A value that requires grad written into a plain leaf (`loss = torch.zeros(1,
            # requires_grad=True)`, then `loss += term`): the program differentiates through the
            # update, and a `no_grad` wrap would drop the gradient the value carries (issue 23's
            # meaning rule): the copy meaning only, or nothing.
            ordered = [c for c in ordered if not c.no_grad]
            why = why or "the update writes a value that requires grad into a leaf: no `no_grad` meaning"
        elif conflict.operands_require_grad or _reshape_of_view(conflict):
            # Into a module's parameter (an EMA of weights that require grad, a weight copied from
            # another): the copy meaning first; a `no_grad` wrap comes after every copy. So for a
            # reshape made in place on a view of a leaf (`rho = xi[:, 0:2]; rho.unsqueeze_(2)`): it
            # changes no value, the reference makes it out of place, as `rho = rho.unsqueeze(2)` does;
            # a wrap changes the view's shape outside autograd and bumps the leaf's version (every view
            # of it saved before then needs a clone).
            ordered = [c for c in ordered if not c.no_grad] + [c for c in ordered if c.no_grad]
        return ordered, why
    site = conflict.fix_site
    if not _same_file(site, path):
        return [], "the line to fix is outside the target's file"
    finding = _finding_at(analysed, site, conflict) if analysed.wrapper is not None else None
    found: List[_Candidate] = []
    at_write = conflict.construct is None
    if finding is not None and finding.status is Status.SAFE:
        found.append(_Candidate(finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title}",
                                at_write=at_write))
    if conflict.construct is None and conflict.kind == "saved-then-modified":
        found += _clones_at_save(conflict, path, trees)
    if finding is not None and finding.status is Status.UNSAFE:
        if finding.reason in _RUNTIME_SETTLES and (finding.reason != "dtype-promotion" or conflict.same_dtypes):
            found.append(_Candidate(finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title} "
                                                 f"(unsafe statically: {finding.reason}; the run settles it)",
                                    at_write=at_write))
        else:
            found.append(_Candidate(finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title} "
                                                 f"(unsafe: {finding.reason}; checked by the verification below)",
                                    at_write=at_write))
    return _with_runtime(found, _saved_runtime(conflict, path, trees), trees), \
        f"no rewrite found for line {site.line}; fix by hand"


def _reshape_of_view(conflict: Conflict) -> bool:
    """A leaf error raised by a reshape made in place (``references.RESHAPES``) on a view of the
    leaf, not on the leaf itself (a rebound leaf is another tensor than the one an optimizer steps)."""
    return conflict.mutation_op in RESHAPES and "a view of a leaf Variable" in conflict.message


def _clones_at_save(conflict: Conflict, path: pathlib.Path, trees: _Trees) -> List[_Candidate]:
    """``.clone()`` where an out-of-place op saved the tensor. Cloning what such an op saved
    cannot change a value (an in-place op's result is another name's tensor: a clone there would
    cut that alias)."""
    if not _same_file(conflict.save, path) or conflict.save_op.endswith("_"):
        return []
    for where, region in trees.at(conflict.save.line):
        fix = _clone_at_save(conflict, where, trees, region)
        if fix is not None:
            return [_Candidate(fix, f"clone at the save site, line {conflict.save.line}: {fix.title}", region)]
    return []


def _step_order_candidates(conflict: Conflict, path: pathlib.Path, trees: _Trees,
                           meaning: str = "as-computed") -> Tuple[List[_Candidate], str]:
    """An optimizer step between a forward and its backward: the statements reordered, in the
    "as computed" meaning, or the forward run again after the step, in the "recompute" one
    (``runtime.step_order``)."""
    where = step_order.fix_site(conflict, conflict.mutation)
    line = where.line if _same_file(where, path) else None
    if meaning == "recompute":
        saves = [conflict.save.line] if _same_file(conflict.save, path) else []
        backward = [b.line for b in conflict.backward if _same_file(b, path)]
        found, why = step_order.recompute_candidates(trees.whole, line, conflict.confirmed, saves, backward)
        # A helper of this file that steps (``optimize(opt, loss)``): the call of it, where the
        # loss's forward and the later backward are.
        for caller in [c.line for c in conflict.callers if _same_file(c, path) and c.line != line][:3]:
            if found:
                break
            found, _ = step_order.recompute_candidates(trees.whole, caller, conflict.confirmed, saves, backward)
        return [_Candidate(fix, action) for fix, action in found], why
    callers = [c.line for c in conflict.callers if _same_file(c, path) and c.line != line][:3]
    found, why = step_order.candidates(trees.whole, line, conflict.confirmed, callers)
    return [_Candidate(fix, action) for fix, action in found], why


def _saved_runtime(conflict: Conflict, path: pathlib.Path, trees: _Trees) -> List[_Candidate]:
    """From the run, for a saved tensor modified in place: the in-place module built without
    ``inplace=True``; the writing statement out-of-place, or writing into a copy."""
    out: List[_Candidate] = []
    if conflict.construct is not None:
        for where, region in trees.at(conflict.construct.line):
            fix = from_run.not_inplace(where, trees.position(conflict.construct, region))
            if fix is not None:
                out.append(_Candidate(fix, f"the module built at line {conflict.construct.line} without "
                                           f"`inplace=True`: {fix.title} (from the run)", region))
                break
        return out
    return _statement_runtime(conflict, trees)


def _statement_runtime(conflict: Conflict, trees: _Trees) -> List[_Candidate]:
    site = conflict.mutation
    out: List[_Candidate] = []
    if site is None:
        return out
    for where, region in trees.at(site.line):
        at = trees.position(site, region)
        made = []
        fix = from_run.out_of_place(where, at)
        if fix is not None:
            made.append(_Candidate(fix, f"the write out-of-place at line {site.line}: {fix.title} (from the run)",
                                   region, at_write=True))
        # Into a copy: of the item the write goes into (``d[k]`` of ``d[k][i, :] = v``), then of the name.
        for fix in from_run.clones_of_items(where, at) + [from_run.clone_before(where, at)]:
            if fix is None:
                continue
            block = where.parents.get(fix.node)
            made.append(_Candidate(fix, f"the write into a copy at line {site.line}: {fix.title} (from the run)",
                                   region, (id(block), fix.title), at_write=True))
        fix = from_run.clones_of_reads(where, at)
        if fix is not None:
            made.append(_Candidate(fix, f"the written tensor's reads on the writing line copied, line {site.line}: "
                                        f"{fix.title} (from the run)", region, at_write=True))
        made = [c for c in made if not _refused_dead(conflict, c, where, at, trees)]
        if made:
            return made
    return out


def _refused_dead(conflict: Conflict, candidate: _Candidate, where: Positions, at: Tuple[int, int],
                  trees: _Trees) -> bool:
    """Whether this run-made rewrite of the writing statement would only rebind a name nobody
    reads afterwards while another holder keeps the object written (``runtime.dead_rebinding``);
    the refusal is recorded for the report."""
    name = from_run.rebound_name(where, at, into_copy=candidate.copy is not None)
    site = conflict.mutation
    if name is None or site is None:
        return False
    why = trees.dead.lost(site.line, site.column, name)
    if why is None:
        return False
    trees.refused.setdefault(id(conflict), []).append(f"{candidate.action}: {why}")
    return True


def _view_runtime(conflict: Conflict, path: pathlib.Path, trees: _Trees) -> List[_Candidate]:
    """From the run, for a write into a view PyTorch refuses: the write out-of-place or into a
    copy; where the view was made, ordinary views (the writes reach the tensor viewed), copies,
    or (made under ``no_grad``) a detached view."""
    out: List[_Candidate] = []
    if _same_file(conflict.mutation, path):
        out += _statement_runtime(conflict, trees)
    made = conflict.created
    if made is None or not _same_file(made, path) or conflict.created_how == "custom-function":
        return out
    for where, region in trees.at(made.line):
        span = trees.span(made, region)
        if span is None:
            break
        what = f"where the view was made, line {made.line}"
        if conflict.created_how == "no-grad":
            fix = from_run.detached(where, span)
            made_here = [] if fix is None else [_Candidate(fix, f"a detached view {what}: {fix.title} (from the run)",
                                                           region)]
        else:
            made_here = [_Candidate(fix, f"ordinary views {what}: {fix.title} (from the run)", region)
                         for fix in from_run.ordinary_views(where, span, conflict.created_op)]
            copy = from_run.copies_of_views(where, span)
            if copy is not None:
                made_here.append(_Candidate(copy, f"copies of the views {what}: {copy.title} (from the run)", region))
        if made_here:
            return out + made_here
    return out


def _with_runtime(static: List[_Candidate], runtime: List[_Candidate], trees: _Trees) -> List[_Candidate]:
    """The static candidates, then the run's, fewest lines changed first (in the order they were
    built where as many: the write out-of-place, into a copy, then where the view was made);
    one candidate per text."""
    seen = set()
    out: List[_Candidate] = []
    sized = []
    for order, candidate in enumerate(static + runtime):
        text = _applied(candidate, trees)
        if text is None or text in seen:
            continue
        seen.add(text)
        if order < len(static):
            out.append(candidate)
        else:
            sized.append((_change_size(trees.source, text), order, candidate))
    return out + [c for _, _, c in sorted(sized, key=lambda x: x[:2])]


def _applied(candidate: _Candidate, trees: _Trees) -> Optional[str]:
    """The file's text with this one candidate applied (None where it does not apply)."""
    try:
        if candidate.region is not None:
            return candidate.region.apply([candidate.fix], trees.lines)
        return trees.whole.module.visit(FixApplier([candidate.fix])).code if trees.whole is not None else None
    except Exception:  # a candidate that cannot be built is no candidate
        return None


def _change_size(before: str, after: str) -> int:
    """Lines changed: removed or added, whichever is more, for each change."""
    a, b = before.splitlines(True), after.splitlines(True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


# ------------------------------------------------------------------ leaf errors (IPF005)
_LEAF_CODES = ("IPF005", "IPF105")


def _leaf_candidates(conflict: Conflict, analysed: FileResult, path: pathlib.Path,
                     trees: "_Trees") -> Tuple[List["_Candidate"], str]:
    """A leaf error's fixes, best first: IPF005's fix whose statements cover the failing line, or
    (walking the conflict's frames outward) the call of the helper it runs in; where the rule has
    none, a ``with torch.no_grad():`` around the call of that helper, then around the failing
    statement itself (the run proved the target requires grad, which the rule could not see).
    Where IPF005 says the leaf is read again afterwards ("update a copy"), its fix only: a
    ``no_grad`` wrap there would be verified against a meaning the code may not have; except
    where the update is a gradient step (its right-hand side reads the leaf's own ``.grad``,
    ``x -= lr * x.grad``), which no program means to differentiate: the wrap comes first."""
    sites = [s for s in (conflict.mutation, *conflict.callers) if _same_file(s, path)]
    if not sites:
        return [], "the line to fix is outside the target's file"
    found: List[_Candidate] = []
    step = sites[0] is conflict.mutation and _gradient_step(trees.source, conflict.mutation.line)
    for site in sites:
        if analysed.wrapper is None:
            break  # libcst cannot parse the file: the rule's fixes do not exist
        leaf = [f for f in analysed.findings if f.code in _LEAF_CODES and f.span.line <= site.line <= f.span.end_line]
        fixed = [f for f in leaf if f.fix is not None and f.status in (Status.SAFE, Status.UNSAFE)]
        if fixed:
            finding = min(fixed, key=lambda f: abs(f.span.column - (site.column or 0)))
            how = "" if finding.status is Status.SAFE else f" (unsafe: {finding.reason}; checked by the verification below)"
            if finding.reason == "leaf-read-after":
                how = (" (unsafe: leaf-read-after: the \"update a copy\" meaning; verified only where it "
                       "agrees with the no-grad reference on everything compared)")
            where = "" if site is conflict.mutation else f", around the call at line {site.line}"
            found.append(_Candidate(finding.fix, f"{finding.code} at line {finding.span.line}{where}: "
                                                 f"{finding.fix.title}{how}", no_grad="no_grad()" in finding.fix.title))
            break
        if any(f.reason == "leaf-read-after" for f in leaf) and not step:
            return found, (f"line {site.line} updates a leaf that is read again afterwards: it means "
                           "\"update a copy\" (IPF005 says how); fix by hand")
    if found and not (step and all("leaf-read-after" in c.action for c in found)):
        return found, ""
    outer = sites[1:2] + sites[:1] if sites[0] is conflict.mutation else sites[:1]
    if step:  # a gradient step: the wrap around the step itself, then the copy fix
        outer, copies, found = sites[:1], found, []
    else:
        copies = []
    for site in outer:
        for positions, region in trees.at(site.line):
            fix = _no_grad_wrap(positions, site.line if region is None else region.position(site.line, 0)[0],
                                trees.source, region is None)
            if fix is not None:
                where = "the failing statement" if site is conflict.mutation else "the call of the helper"
                note = " (a gradient step: its right-hand side reads the leaf's .grad)" if step else ""
                found.append(_Candidate(fix, f"{fix.title} around {where}, line {site.line}{note} (not IPF005's: "
                                             "checked by the verification below)", region, no_grad=True))
                break
    return found + copies, f"no rewrite found for line {conflict.mutation.line if conflict.mutation else '?'}; fix by hand"


# In-place ops that overwrite what they write instead of changing it: on a plain leaf (not a
# module's parameter) just made, ``c.index_copy_(0, idx, rows)``, ``w[0] = 0.0``, they may set
# fixed entries (the copy meaning: the clone two public threads give) as well as initialise.
_OVERWRITES = {"__setitem__", "copy_", "fill_", "zero_", "index_copy_", "index_fill_", "index_put_",
               "masked_fill_", "masked_scatter_", "scatter_", "scatter_reduce_", "put_", "set_", "normal_",
               "uniform_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_", "log_normal_",
               "fill_diagonal_"}


def _no_grad_runtime(conflict: Conflict, path: pathlib.Path, trees: _Trees) -> List[_Candidate]:
    """From the run, for a leaf error: ``with torch.no_grad():`` around the writing statement
    (joining a wrap the write before it got), where the run's facts allow the no-grad meaning
    (issue 23): no value written carries a gradient from another leaf (``w[3] *= 1.5`` reads only
    ``w``), or the leaf is a module's parameter (which the module reads as it is); and on a plain
    leaf, the update changes its values rather than overwriting them. The verification's no-grad
    reference then says whether nothing differentiated goes through the update."""
    site = conflict.mutation
    if site is None or not _same_file(site, path):
        return []
    if conflict.operands_require_grad and not conflict.written_parameter:
        return []
    if not conflict.written_parameter and conflict.mutation_op in _OVERWRITES:
        return []
    why = "a module's parameter" if conflict.written_parameter else "the value written carries no other leaf's gradient"
    out: List[_Candidate] = []
    # The call of the helper the write runs in, first (a helper other callers share keeps grad on),
    # then the failing statement itself: as where a rule offers nothing (``_leaf_candidates``).
    helper = next((c for c in conflict.callers if _same_file(c, path)), None)
    for at, what in ((helper, "the call of the helper"), (site, "the failing statement")):
        if at is None:
            continue
        for where, region in trees.at(at.line):
            fix = _no_grad_wrap(where, at.line if region is None else region.position(at.line, 0)[0],
                                trees.source, region is None)
            if fix is not None:
                out.append(_Candidate(fix, f"{fix.title} around {what}, line {at.line} (from the run: {why}; "
                                           "checked by the verification below)", region, no_grad=True))
                break
    return out


def _gradient_step(source: str, line: int) -> bool:
    """The statement at ``line`` updates a name in place with a value that reads that name's
    own ``.grad`` (``x -= lr * x.grad``, ``x.add_(x.grad, alpha=-lr)``, ``x[m] -= x.grad[m]``):
    an optimizer step, never meant to be differentiated."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if not isinstance(node, (ast.AugAssign, ast.Assign, ast.Expr)) or node.lineno != line:
            continue
        if isinstance(node, ast.AugAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr.endswith("_"):
            target, value = node.value.func.value, node.value
        else:
            continue
        while isinstance(target, ast.Subscript):
            target = target.value
        if not isinstance(target, ast.Name):
            continue
        if any(isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.value, ast.Name)
               and n.value.id == target.id for n in ast.walk(value)):
            return True
    return False


def _copy_meaning_candidates(conflict: Conflict, analysed: FileResult, path: pathlib.Path,
                             found: List[_Candidate]) -> List[_Candidate]:
    """Last, the out-of-place form the passes offer at the failing statement (``y = F.relu(x)``,
    ``embeds = embeds + ...``): the copy meaning, which the verification takes as the
    reference where the program differentiates through the update (its right-hand side
    requires grad, or the gradient the program reads goes through it)."""
    site = conflict.mutation
    if not _same_file(site, path) or analysed.wrapper is None:
        return []
    finding = _finding_at(analysed, site, conflict)
    if finding is None or finding.fix is None or finding.code in _LEAF_CODES or any(c.fix is finding.fix for c in found):
        return []
    return [_Candidate(finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title} (the copy "
                                    "meaning: checked by the verification below)", at_write=True)]


def _no_grad_wrap(where: Positions, line: int, source: str, whole: bool = True) -> Optional[Fix]:
    """``with torch.no_grad():`` around the statement of ``line`` (the innermost one in an
    indented block), adding ``import torch`` where the module does not import it."""
    positions, parents = where.ranges, where.parents
    best = None
    for node, rng in positions.items():
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) \
                and rng.start.line <= line <= rng.end.line \
                and isinstance(parents.get(node), (cst.IndentedBlock, cst.Module)) \
                and (best is None or rng.start.line >= best[1].start.line and rng.end.line <= best[1].end.line):
            best = (node, rng)
    if best is None or isinstance(best[0], (cst.FunctionDef, cst.ClassDef)):
        return None
    stmt = best[0]
    block = parents[stmt]
    name = _torch_name(source)
    context = f"{name or 'torch'}.no_grad()"
    also: Tuple[Fix, ...] = ()
    if name is None:
        if not whole:
            return None  # a region of the file: no place for the import there
        also = (Fix(where.module, lambda m: ensure_import(m, "torch"), "Add `import torch`", order=-1),)
    index = list(block.body).index(stmt)
    if index and _is_no_grad_with(block.body[index - 1], context):
        # The write before it got its wrap in an earlier round (a loop's second write): join it.
        return Fix(block, lambda b: join_with_before(b, stmt, index), f"Move into the `with {context}:` above",
                   order=index)
    return Fix(block, lambda b: wrap_run_in_with(b, [stmt], context, index), f"Wrap in `with {context}:`",
               order=index, also=also)


def _is_no_grad_with(node: cst.CSTNode, context: str) -> bool:
    """``node`` is ``with <context>:`` (one item, no ``as``), with an indented body."""
    if not isinstance(node, cst.With) or len(node.items) != 1 or node.items[0].asname is not None \
            or not isinstance(node.body, cst.IndentedBlock):
        return False
    try:
        return cst.Module(body=[]).code_for_node(node.items[0].item) == context
    except Exception:
        return False


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
def _view_candidates(conflict: Conflict, analysed: FileResult, path: pathlib.Path) -> Tuple[List["_Candidate"], str]:
    """A view PyTorch refuses to modify in place: IPF006's fix (write into a copy) at the
    write, safe or not; the verification (writes into copies) decides, and says ``unproven``
    where the tensor viewed is read after the write."""
    site = conflict.mutation
    if not _same_file(site, path):
        return [], "the write is outside the target's file"
    views = [f for f in analysed.findings if analysed.wrapper is not None and f.code in ("IPF006", "IPF106") and f.fix is not None
             and f.span.line <= site.line <= f.span.end_line and f.status in (Status.SAFE, Status.UNSAFE)]
    if not views:
        made = f" (the view was made at line {conflict.created.line})" if conflict.created else ""
        return [], f"no rewrite found for the write at line {site.line}{made}; fix by hand"
    column = site.column or 0
    finding = min(views, key=lambda f: abs(f.span.column - column))
    note = "" if finding.status is Status.SAFE else f" (unsafe: {finding.reason}; checked by the verification below)"
    return [_Candidate(finding.fix, f"{finding.code} at line {site.line}: {finding.fix.title}{note}")], ""


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


def _clone_at_save(conflict: Conflict, where: Positions, trees: "_Trees", region: Optional[Region]) -> Optional[Fix]:
    """``.clone()`` the saved tensor where it is made: the op's output, or the saved input."""
    span = trees.span(conflict.save, region)
    expr = where.expression(span) if span is not None else None
    if expr is None:
        return None
    target = expr
    if conflict.saved_as.startswith("input "):
        target = _input_expression(expr, conflict.saved_as.split()[1])
        if target is None:
            return None
    cloned = clone_of(target)
    return Fix(target, lambda node: clone_of(node), f"Rewrite as `{cst.Module([]).code_for_node(cloned)}`")


def _input_expression(expr: cst.BaseExpression, where: str) -> Optional[cst.BaseExpression]:
    """The expression for input ``where`` of the op that ``expr`` calls: ``"1"``, or ``"1.0"``
    for the first item of a list or tuple written as its second argument."""
    index, _, item = where.partition(".")
    found = _input_at(expr, int(index))
    if not item:
        return found
    if not isinstance(found, (cst.List, cst.Tuple)):
        return None
    elements = found.elements
    at = int(item)
    if at >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements[: at + 1]):
        return None
    return elements[at].value


def _input_at(expr: cst.BaseExpression, index: int) -> Optional[cst.BaseExpression]:
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
        why = _why(attempt.verification)
        out.append(f"attempt {attempt.steps[0].attempt if attempt.steps else '?'}: {verdict}"
                   f"{': ' + why if why else ''}; trying the next candidate fix for each conflict")
        out += [f"   tried: {step.action}" for step in attempt.steps if step.candidates]
        out += [f"   tried: {r}" for r in attempt.rejected]
    if result.attempts:
        out += [f"tried first: {r}" for r in result.attempts[-1].rejected]
    for i, step in enumerate(result.steps, 1):
        c = step.conflict
        where = f"line {c.mutation.line}" if c.mutation else "?"
        if c.mutation is not None and result.project is not None \
                and pathlib.Path(c.mutation.file).resolve() != pathlib.Path(result.target.partition("::")[0]).resolve():
            where = f"{_shown(c.mutation.file)}:{c.mutation.line}"
        saved = f", saved at line {c.save.line}" if c.save else ""
        out.append(f"{i}. {c.kind} at {where}{saved}: {step.action}")
        if step.candidates:
            out += [f"   refused: {r}" for r in step.refused]
    if result.unlocated:
        last = result.located[-1]
        out.append(f"The program still dies with an in-place error that was not located: {result.unlocated}.")
        out.append(f"  ({last.error})")
    elif not result.steps and result.failed_otherwise:
        out.append(f"No in-place conflict found, but the run failed otherwise: {result.failed_otherwise}")
        out.append("  (nothing was repaired: a conflict after that point is not seen)")
    elif not result.steps:
        out.append("No in-place conflicts found: nothing to repair.")
    return "\n".join(out)


def _why(verification: Optional[VerifyResult]) -> str:
    """The first reason a verification gave for its verdict."""
    if verification is None:
        return ""
    problems = list(verification.problems) + [p for d in verification.devices if d.decides for p in d.problems]
    return problems[0] if problems else ""


def _shown(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def diff(result: RepairResult, path_label: str) -> str:
    """One diff per file changed: the target's, then the other project files'."""
    text = unified_diff(path_label, result.original, result.repaired) if result.repaired != result.original else ""
    return text + "".join(unified_diff(_shown(str(o.path)), o.original, o.repaired) for o in result.others)


def write(result: RepairResult, path: pathlib.Path) -> List[pathlib.Path]:
    """Write every file the verified repair changed, all or nothing: each is checked unchanged
    since it was read before any is written, and a failed write puts back those written before
    it. Raises WriteRefused or OSError (then no file is changed)."""
    from codemod.engine.fileio import FileChanged, read_snapshot, write_atomic

    files = ([(path, result.repaired_bytes, result.read)] if result.repaired != result.original else []) + \
        [(o.path, o.repaired_bytes, o.read) for o in result.others]
    for target, _, snapshot in files:
        if snapshot is not None and read_snapshot(target).data != snapshot.data:
            raise FileChanged(f"{target}: changed on disk since it was read: left as it is (run again)")
    written: List[Tuple[pathlib.Path, bytes]] = []
    try:
        for target, data, snapshot in files:
            write_atomic(target, data, snapshot)
            written.append((target, snapshot.data if snapshot is not None else b""))
    except BaseException:
        for target, old in reversed(written):
            write_atomic(target, old)
        raise
    return [target for target, _, _ in files]
