"""Shared helpers for tests that run small programs and the tool on them.

Many test files check a program written as source text: the tool processes it (alone, or inside
a two-file project so that every file that could import it is seen), and torch runs the
original and the rewritten program so that their results can be compared. These helpers are
the one place those steps are written; a test file keeps only what is its own (a header, a
select list).
"""

from __future__ import annotations

import pathlib
import tempfile

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.engine.project import build_index

# A second project file that imports nothing: with it the index knows every file that could
# import ``case`` (checked alone, any file may, and the forward-input rule makes nothing safe).
OTHER_FILE = "import torch\n\n\ndef main():\n    return torch.zeros(1)\n"


def process_in_project(source: str, settings: Settings, fix: bool = False, *, other: bool = True):
    """Process ``source`` as ``case.py`` of a project indexed from disk (with ``other.py`` beside
    it unless ``other`` is false); the tool must not fail."""
    data = source.encode()
    with tempfile.TemporaryDirectory() as tmp:
        case = pathlib.Path(tmp, "case.py")
        case.write_bytes(data)
        files = [str(case)]
        if other:
            neighbour = pathlib.Path(tmp, "other.py")
            neighbour.write_text(OTHER_FILE)
            files.append(str(neighbour))
        index = build_index(files)
        result = process_source(data, "case.py", settings, fix=fix, project=index, module_name="case")
    assert result.error is None, result.error
    return result


def proven(source: str) -> list:
    """(code, line) of each proven finding (IPF1xx) the default report gives on ``source`` in a project."""
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def safety_marks(header: str, source: str) -> list:
    """(line in ``source``, safety, reason) of each proven candidate (IPF1xx) of ``header + source``
    in a project: what the safe tier decides at each line."""
    result = process_in_project(header + source, Settings(select=("IPF1",)))
    offset = header.count("\n")
    return [(f.span.line - offset, f.status.value if f.status else None, f.reason) for f in result.findings]


def fixed_source(source: str, settings: Settings | None = None, *, project: bool = False,
                 other: bool = True) -> str:
    """The program after ``fix`` (default settings: the safe tier), or ``source`` unchanged."""
    settings = settings or Settings()
    if project:
        result = process_in_project(source, settings, fix=True, other=other)
    else:
        result = process_source(source.encode(), "case.py", settings, fix=True)
        assert result.error is None, result.error
    return result.fixed if result.changed else source


def run_program(source: str, name: str = "main", *, seed: int | None = 0):
    """Execute ``source`` as module ``case`` and return ``name()``; torch is seeded after the
    module ran (so that module-level randomness and the call's are both fixed)."""
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    if seed is not None:
        torch.manual_seed(seed)
    return space[name]()


def raises_inplace(source: str, name: str = "main",
                   message: str | tuple[str, ...] = "modified by an inplace operation") -> bool:
    """Whether running the program raises an in-place error whose text contains ``message`` (or
    one of several)."""
    messages = (message,) if isinstance(message, str) else message
    try:
        run_program(source, name)
    except RuntimeError as error:
        return any(text in str(error) for text in messages)
    return False


def changed_by_fix(source: str, settings: Settings | None = None) -> str:
    """``fixed_source`` that insists the fix changed something."""
    result = fixed_source(source, settings)
    assert result != source, "the fix changed nothing"
    return result


def assert_same_results(source: str) -> None:
    """The default fix (in a project whose index shows every file) leaves every tensor
    ``main()`` returns bit-identical."""
    fixed = fixed_source(source, project=True)
    got, want = list(run_program(fixed)), list(run_program(source))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.equal(g, w), f"the safe fix changed a working program:\n{fixed}"


def repair_program(tmp_path, name: str, text: str, target: str = "compute"):
    """``repair FILE::target`` on ``text`` (dedented) written as ``name.py``: the result and what
    the command would print (the repair, then the verification's table)."""
    import textwrap

    from codemod.runtime.repair import render, repair
    from codemod.runtime.verify import render_table

    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    result = repair(f"{path}::{target}", timeout=240)
    shown = render(result) + ("\n" + render_table(result.verification) if result.verification else "")
    return result, shown


def marked(source: str) -> set:
    """The lines of ``source`` that end with ``# MARK``: where a probe expects (or refuses) a proof."""
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# MARK")}


def proven_lines(source: str) -> set:
    return {line for _, line in proven(source)}


def runs_unproven(source: str) -> None:
    """A false-positive probe: it runs backward without the in-place error, and no marked line is proven."""
    assert marked(source)
    run_program(source)
    assert not marked(source) & proven_lines(source)


def raises_proven(source: str, message: str = "modified by an inplace operation") -> None:
    """A look-alike that raises the error, with every marked line proven."""
    assert raises_inplace(source, message=message)
    assert marked(source) <= proven_lines(source)
