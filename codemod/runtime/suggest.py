"""The fix for located conflicts, as new source text and a diff.

``run``, ``repair`` on scripts, the pytest plugin and the notebook magic all show the same
suggestion for a conflict the locator found:

- in-place errors (a saved tensor modified) get :mod:`codemod.runtime.repair`'s choice (the
  static fix when the run settles its safety, else a clone at the save site);
- leaf errors get the meaning PyTorch documents for updating a leaf: the statement that updates
  it runs under ``torch.no_grad()`` (weight surgery, init, manual SGD);
- view errors (a view PyTorch refuses to modify in place) get IPF006's fix: the write goes
  into a copy of the view (``q = q * s``, or ``q = q.clone()`` before it);
- conflicts no rewrite fixes get no rewrite, and say why.

A suggestion is only that: ``repair`` proves it before writing anything.
"""

from __future__ import annotations

import dataclasses
import hashlib
import linecache
import os
import pathlib
from typing import Dict, List, Optional, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from codemod.config import Settings
from codemod.encoding import decode_source
from codemod.engine.fileio import read_source
from codemod.engine.diffs import unified_diff
from codemod.runtime.locate import Conflict
from codemod.runtime.repair import after_earlier_write, first_choice


@dataclasses.dataclass
class Suggestion:
    """What to change for some conflicts of one file: the new text (None if nothing) and why."""

    path: str
    actions: List[str]
    original: str
    fixed: Optional[str]

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.fixed != self.original

    def diff(self, label: Optional[str] = None) -> str:
        return unified_diff(label or display_path(self.path), self.original, self.fixed) if self.changed else ""


def display_path(path: str) -> str:
    """``path`` relative to the working folder when it is inside it (what a user typed)."""
    if path.startswith("<"):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def read_text(path: str) -> Optional[str]:
    """A file's text, or an IPython cell's (kept in linecache, not on disk). A file is decoded
    as CPython decodes it (a BOM, or the coding cookie: latin-1 files too), every line's ending
    kept as it is: a rewrite written back changes only the lines it fixes."""
    if path.startswith("<"):
        lines = linecache.getlines(path)
        return "".join(lines) if lines else None
    try:
        return decode_source(read_source(pathlib.Path(path)))
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None


def digest(text: str) -> str:
    """What identifies the text a suggestion was computed on (the parent of a run compares it
    with the text it read: a file saved in between is not rewritten)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fixable(conflict: Conflict) -> bool:
    return conflict.kind in ("saved-then-modified", "leaf", "view", "optimizer-step") and conflict.fix_site is not None


def suggest(conflicts: List[Conflict], path: str, source: Optional[str] = None,
            settings: Optional[Settings] = None, skip: Optional[Dict[str, int]] = None,
            meaning: str = "as-computed") -> Suggestion:
    """The fixes for the ``conflicts`` whose fix goes in ``path``, applied to its text
    (``skip``: candidates to pass over per conflict, by :func:`repair.key_text`, after a
    repair whose first choices did not verify)."""
    source = read_text(path) if source is None else source
    if source is None:
        return Suggestion(path, ["cannot read the file to fix"], "", None)
    actions: List[str] = []
    fixed = source
    leaves = [c for c in conflicts if c.kind == "leaf"]
    others = [c for c in conflicts if c.kind != "leaf"]
    if leaves:
        fixed, leaf_actions = wrap_in_no_grad(fixed, [c.mutation.line for c in leaves if c.mutation])
        actions += leaf_actions
    if others:
        try:
            fixed, steps = first_choice(fixed, pathlib.Path(path), others, settings or Settings(), skip, meaning)
        except Exception as exc:  # HarnessError: the file does not parse
            return Suggestion(path, actions + [f"no rewrite: {exc}"], source, None)
        actions += [step.action for step in steps]
    return Suggestion(path, actions, source, fixed)


def suggest_all(conflicts: List[Conflict], sources: Optional[Dict[str, str]] = None,
                settings: Optional[Settings] = None, skip: Optional[Dict[str, int]] = None,
                meaning: str = "as-computed") -> List[Suggestion]:
    """One suggestion per file that holds a line to fix, in the order the conflicts came
    (``meaning``: of the step-order fixes, ``runtime.step_order``). As ``repair FILE::TARGET``
    does (:func:`~codemod.runtime.repair.after_earlier_write`), a saved tensor written by several
    lines is fixed at the write that came first in the run; the later writes wait for the next
    run, which says whether they still reach it, unless the first writes have no fix."""
    later = {id(c) for c in after_earlier_write(conflicts)}
    if later:
        first = [c for c in conflicts if id(c) not in later]
        out = _suggest_by_file(first, sources, settings, skip, meaning)
        if any(s.changed for s in out):
            waiting = [c for c in conflicts if id(c) in later and c.mutation is not None]
            return out + [Suggestion(c.mutation.file, [f"the write at line {c.mutation.line} waits: an earlier write "
                                                      "of the same saved tensor is fixed first"], "", None)
                          for c in waiting]
    return _suggest_by_file(conflicts, sources, settings, skip, meaning)


def _suggest_by_file(conflicts: List[Conflict], sources: Optional[Dict[str, str]], settings: Optional[Settings],
                     skip: Optional[Dict[str, int]], meaning: str) -> List[Suggestion]:
    by_file: Dict[str, List[Conflict]] = {}
    unfixable = []
    for conflict in conflicts:
        if fixable(conflict):
            by_file.setdefault(conflict.fix_site.file, []).append(conflict)
        else:
            unfixable.append(conflict)
    texts = {os.path.realpath(p): text for p, text in (sources or {}).items()}
    out = [suggest(group, path, texts.get(os.path.realpath(path)) if not path.startswith("<") else None, settings,
                   skip, meaning)
           for path, group in by_file.items()]
    for conflict in unfixable:
        why = {"view": "an in-place change of a view autograd cannot track; rewrite it by hand "
                       "(e.g. work on a clone, or build the result out of place)"}.get(conflict.kind, conflict.message)
        out.append(Suggestion(conflict.fix_site.file if conflict.fix_site else "?",
                              [f"no rewrite ({conflict.kind}): {why or 'fix it by hand'}"], "", None))
    return out


def describe(conflict: Conflict) -> str:
    """``conflict.describe()`` with file paths as the user would type them."""
    def shown(site):
        return None if site is None else dataclasses.replace(site, file=display_path(site.file))

    return dataclasses.replace(conflict, save=shown(conflict.save), mutation=shown(conflict.mutation),
                               construct=shown(conflict.construct), created=shown(conflict.created)).describe()


def in_place_family(error: BaseException) -> bool:
    """The in-place, leaf or view error (for reporting only: only stable words are read)."""
    text = str(error)
    return isinstance(error, RuntimeError) and (
        "inplace operation" in text or "in-place operation" in text or "modified inplace" in text)


def explain(error: BaseException, conflicts) -> str:
    """Both lines and the suggested fix, for an error of the in-place family; else ''."""
    confirmed = [c for c in conflicts if c.confirmed]
    if not in_place_family(error):
        return ""
    if not confirmed:
        return ("the locator did not see the change (native code, another thread, or code that "
                "installs its own saved-tensor hooks)")
    parts = [describe(c) for c in confirmed]
    for suggestion in suggest_all(confirmed):
        parts += [f"fix: {a}" for a in suggestion.actions]
        if suggestion.changed:
            parts.append(suggestion.diff().rstrip("\n"))
    return "\n".join(parts)


# ---------------------------------------------------------------- leaf updates
class _WrapInNoGrad(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, lines: set, torch_name: str) -> None:
        super().__init__()
        self.lines = lines
        self.torch_name = torch_name
        self.wrapped: List[int] = []

    def leave_SimpleStatementLine(self, original, updated):
        rng = self.get_metadata(PositionProvider, original)
        hit = sorted(line for line in self.lines if rng.start.line <= line <= rng.end.line)
        if not hit:
            return updated
        self.wrapped.append(hit[0])
        item = cst.WithItem(cst.parse_expression(f"{self.torch_name}.no_grad()"))
        body = cst.IndentedBlock(body=[updated.with_changes(leading_lines=[])])
        return cst.With(items=[item], body=body, leading_lines=updated.leading_lines)


def _torch_name(module: cst.Module) -> Optional[str]:
    """The name ``torch`` is imported as at the top of the module (``import torch as th``)."""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if cst.Module([]).code_for_node(alias.name) == "torch":
                            return alias.asname.name.value if alias.asname else "torch"
    return None


def wrap_in_no_grad(source: str, lines: List[int]) -> Tuple[str, List[str]]:
    """Run the statements on ``lines`` under ``torch.no_grad()``: the update of a leaf tensor
    applied outside autograd, which is what weight surgery, init and manual SGD mean."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        return source, [f"no rewrite: the file does not parse ({exc.message})"]
    torch_name = _torch_name(module)
    if torch_name is None:
        return source, ["no rewrite: the file does not `import torch` at its top"]
    wrapper = MetadataWrapper(module)
    transformer = _WrapInNoGrad(set(lines), torch_name)
    fixed = wrapper.visit(transformer).code
    actions = [f"leaf update at line {line}: run it under `{torch_name}.no_grad()` "
               f"(the update applied outside autograd)" for line in sorted(set(transformer.wrapped))]
    missed = sorted(set(lines) - set(transformer.wrapped))
    actions += [f"no rewrite for the leaf update at line {line} (not a simple statement)" for line in missed]
    return fixed, actions
