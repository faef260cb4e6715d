"""The ``inplacefix`` command line: ``check``, ``fix`` (``--diff`` to review), ``rules``.

Exit codes follow Ruff: 0 nothing to do, 1 findings remain or a diff exists, 2 the tool
failed (bad arguments or settings, a file that cannot be read, parsed or written, an internal
error: one line, and its traceback with ``-v`` or ``INPLACEFIX_DEBUG=1``).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import os
import pathlib
import signal
import sys
from typing import List, Optional, Union

import typer
from typer.core import TyperGroup

from codemod import __version__, debug
from codemod.config import ConfigError, load_settings, split_codes
from codemod.engine.cache import cache_folder
from codemod.engine.files import process_path
from codemod.engine.pipeline import process_source
from codemod.engine.discover import Walk, discover
from codemod.findings import REASONS, Status
from codemod.frontends import workers
from codemod.frontends.formats import MACHINE, OutputFormat, render, statistics as stats_text
from codemod.frontends.report import (
    check_summary,
    fix_summary,
    json_document,
    result_diff,
    sarif_document,
    text_line,
)


class _Commands(TyperGroup):
    """Every command: an internal error is exit 2 and one line (the traceback with ``-v``),
    never exit 1, which would read as "findings remain"."""

    def invoke(self, ctx):
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()  # a closed pipe raises here, not at exit
        except BrokenPipeError:
            _stdout_gone(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except KeyboardInterrupt:  # a Ctrl-C outside the guarded part of a run, or a second one
            signum = workers.last_signal() or signal.SIGINT
            typer.echo(f"error: interrupted ({signal.Signals(signum).name})", err=True)
            raise typer.Exit(128 + signum)
        except Exception as exc:
            debug.print_traceback()
            what = (str(exc).strip().splitlines() or [""])[0]
            hint = "" if debug.enabled() else " (-v shows the traceback)"
            typer.echo(f"error: internal error: {type(exc).__name__}: {what}{hint}", err=True)
            raise typer.Exit(2)


# Commands whose output is only information: a reader that stops early (``rules | head -1``)
# got what it asked for. The others exit 141 (128 + SIGPIPE, as a shell reports a tool killed by
# it), never 0: under ``set -o pipefail``, ``check | head`` must not pass with findings unread.
_INFORMATION = frozenset({"rules", "rule"})


def _stdout_gone(ctx) -> None:
    """The reader closed standard output: say nothing more there (Python would print a traceback
    when it flushes at exit) and end quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    raise typer.Exit(0 if ctx.invoked_subcommand in _INFORMATION else 141)


app = typer.Typer(
    cls=_Commands,
    add_completion=False,
    no_args_is_help=True,
    help="Find and fix PyTorch in-place operations that break autograd.",
)


class Meaning(str, enum.Enum):
    """What a step-order repair (an optimizer step between a forward and its backward) means."""

    as_computed = "as-computed"
    recompute = "recompute"


class Format(str, enum.Enum):
    text = "text"
    json = "json"
    sarif = "sarif"


# Not readable=True: a file that cannot be read is reported with the others, not before them.
PathsArg = typer.Argument(None, help="Files or folders (default: the current folder).", readable=False)
SelectOpt = typer.Option(None, "--select", help="Rule codes or prefixes to report (comma-separated).")
IgnoreOpt = typer.Option(None, "--ignore", help="Rule codes or prefixes to leave out.")
FormatOpt = typer.Option(Format.text, "--output-format", "--format", help="Output format.")
JobsOpt = typer.Option(None, "-j", "--jobs", help="Parallel processes (default: CPU count).")
ConfigOpt = typer.Option(None, "--config", help="A configuration file (pyproject.toml, inplacefix.toml) to use "
                                                "for every file, or one setting as `KEY = VALUE` in TOML (repeatable).")
ExtendSelectOpt = typer.Option(None, "--extend-select", help="Rule codes or prefixes to report besides --select's.")
ForceExcludeOpt = typer.Option(None, "--force-exclude/--no-force-exclude",
                               help="Leave out excluded files even when named on the command line (pre-commit).")
SkippedOpt = typer.Option(False, "--show-skipped", help="Also list candidates left alone on purpose.")
UnsafeOpt = typer.Option(None, "--unsafe-fixes/--no-unsafe-fixes", help="Apply fixes that may change behaviour.")
ProgressOpt = typer.Option(True, "--progress/--no-progress", help="Progress bar on a terminal.")
NotebooksOpt = typer.Option(None, "--notebooks/--no-notebooks", help="Also process .ipynb files (default: on).")
CacheOpt = typer.Option(True, "--cache/--no-cache", help="Reuse results for unchanged files (.inplacefix_cache/).")
# run/repair SCRIPT ARGS...: words the tool does not know go to the script.
_SCRIPT_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"inplacefix {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
    verbose: bool = typer.Option(False, "-v", "--verbose",
                                 help="Show the traceback of an internal error (also: INPLACEFIX_DEBUG=1)."),
) -> None:
    """Find and fix PyTorch in-place operations that break autograd."""
    if verbose:
        debug.enable()


def _settings(paths, config, select, ignore, unsafe_fixes, notebooks=None, *, extend_select=None,
              force_exclude=None):
    """The run's settings. ``config``: what ``--config`` gave, each a file or a `KEY = VALUE`."""
    from codemod.rules.registry import table

    start = pathlib.Path(paths[0]) if paths else pathlib.Path.cwd()
    files = [str(c) for c in config or () if os.path.isfile(c) or "=" not in str(c)]
    values = [str(c) for c in config or () if str(c) not in files]
    if len(files) > 1:
        typer.echo("error: --config: give one configuration file (and any `KEY = VALUE`s)", err=True)
        raise typer.Exit(2)
    for name in files:
        if not os.path.isfile(name):
            typer.echo(f"error: --config {name!r}: no such file, and not `KEY = VALUE`", err=True)
            raise typer.Exit(2)
    try:
        return load_settings(
            pathlib.Path(files[0]) if files else None, start, table().keys(), config_values=values,
            select=split_codes(select), ignore=split_codes(ignore), unsafe_fixes=unsafe_fixes,
            include_notebooks=notebooks, extend_select=split_codes(extend_select), force_exclude=force_exclude,
        )
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)


def _add_noqa(paths, settings, jobs, progress: bool, cache: bool, quiet: bool) -> None:
    """``check --add-noqa``: a ``# noqa: CODE`` on the line of each finding, merged into a
    ``# noqa:`` there, after any other comment; then exit (0, or 2 if a file failed)."""
    from codemod.engine.fileio import WriteRefused
    from codemod.engine.suppression import add_noqa

    results = _run(paths, settings, fix=False, write=False, edits=False, jobs=jobs, progress=progress,
                   cache=cache, quiet=quiet)
    failed = _errors(results)
    added = 0
    for r in results:
        wanted = [f for f in r.findings if f.counts]
        if not wanted or r.error is not None:
            continue
        if r.path.endswith(".ipynb"):
            typer.echo(f"{r.path}: notice: --add-noqa leaves notebooks alone", err=True)
            continue
        try:
            added += add_noqa(pathlib.Path(r.path), [(f.span.line, f.code) for f in wanted])
        except (OSError, ValueError, SyntaxError, WriteRefused) as exc:
            typer.echo(f"{r.path}: error: {getattr(exc, 'strerror', None) or exc} (not changed)", err=True)
            failed += 1
    if not quiet:
        typer.echo(f"Added {added} noqa directive{'' if added == 1 else 's'}.", err=True)
    raise typer.Exit(2 if failed else 0)


def _force_excluded(settings, path: pathlib.Path) -> bool:
    """With ``force-exclude``: whether a file named on the command line is excluded."""
    from codemod.engine.discover import is_excluded

    return settings.force_exclude and is_excluded(path, settings)


def _run(paths, settings, *, fix: bool, write: bool, edits: bool, jobs, progress: bool, cache: bool = True,
         quiet: bool = False):
    """Process every file (in parallel where it pays), in a stable order. Interrupted (SIGINT,
    SIGTERM): the files done so far, then the interruption is reported (exit 130 or 143) and
    nothing is written after the signal (codemod.frontends.workers)."""
    with workers.Interruption() as stop:
        results, processed, total = _run_files(paths, settings, fix=fix, write=write, edits=edits, jobs=jobs,
                                               progress=progress, cache=cache, stop=stop, quiet=quiet)
    if stop.signal is not None:
        _interrupted(results, processed, total, stop.signal, settings, fix=fix, diff=fix and not write)
    return results


def _interrupted(results, processed: int, total: int, signum: int, settings, *, fix: bool, diff: bool) -> None:
    """Report what the interrupted run did (the files processed: their diffs, errors, the fix
    summary), then exit ``128 + signum``."""
    changed = [r for r in results if r.changed and r.error is None]
    if diff:
        for r in changed:
            sys.stdout.write(result_diff(r))
    _errors(results)
    if fix:
        applied = {id(f) for r in changed for f in r.applied}
        remaining = [f for r in results for f in r.findings if f.counts and id(f) not in applied]
        typer.echo(fix_summary(len(applied), len(changed), remaining, would=diff,
                               unsafe_fixes=settings.unsafe_fixes), err=True)
    typer.echo(f"error: {workers.interruption_message(signum, processed, total)}", err=True)
    raise typer.Exit(128 + signum)


def _run_files(paths, settings, *, fix: bool, write: bool, edits: bool, jobs, progress: bool, cache: bool, stop,
               quiet: bool = False):
    from codemod.config import remember
    from codemod.engine.pipeline import tune_gc

    tune_gc(one_shot=True)
    remember(True)  # the files of a folder share their nearest configuration file
    walk = Walk()
    files = [str(p) for p in discover([pathlib.Path(p) for p in paths or ["."]], settings, walk)]
    unwalked = _walk_report(walk, remove_leftovers=write)
    if not files and not quiet:
        typer.echo("warning: no Python files found", err=True)
    cache_dir = None
    if cache:
        cache_dir, refused = cache_folder(pathlib.Path(settings.root or "."))
        if refused:
            typer.echo(refused, err=True)
    from codemod.engine.libraries import for_settings
    from codemod.engine.project import build_index

    from codemod.engine import parsed

    # The other files' calls of each file's functions, gathered on the same workers; what this
    # process parsed for them is kept for their processing, which follows. A run that writes
    # has the index work out what it is asked later from the files as read now (``writing``).
    try:
        project = build_index(files, cache_dir, lambda work, items: _process(items, work, jobs, False, stop),
                              for_settings(settings, cache_dir), keep_sources=True, writing=write)
        work = functools.partial(process_path, settings=settings, fix=fix, write=write, edits=edits,
                                 cache_dir=cache_dir, project=project)
        done = [r for r in _process(files, work, jobs, progress, stop) if r is not None]  # None: not reached
    finally:
        parsed.clear()
        remember(False)
    return done + unwalked, len(done), len(files)


def _walk_report(walk: Walk, remove_leftovers: bool) -> list:
    """Print the notices of the walk; return its failures as results (they count as errors).
    With ``remove_leftovers`` (a run that writes), delete the temporary files killed writes left."""
    from codemod.engine.pipeline import FileError, FileResult

    failed = []
    for problem in walk.problems:
        if problem.failed:
            failed.append(FileResult(problem.path, error=FileError(problem.message)))
        else:
            typer.echo(f"warning: {problem.path}: {problem.message}", err=True)
    for leftover in walk.leftovers if remove_leftovers else []:
        try:
            leftover.unlink()
            typer.echo(f"removed {leftover}: a temporary file left by an interrupted write", err=True)
        except OSError:
            pass
    return failed


def _process(files: list, work, jobs, progress: bool, stop=None) -> list:
    """``work``'s result for each file, in order; None for the files an interruption (``stop``,
    a :class:`workers.Interruption`) left unprocessed."""
    jobs = min(jobs or os.cpu_count() or 1, len(files))
    show = progress and sys.stderr.isatty() and len(files) >= 50
    if stop is not None and stop.requested:
        return [None] * len(files)
    if jobs <= 1 or len(files) < 4:
        return _padded(_collect(workers.each_until_stopped(work, files), len(files), show), len(files))
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from codemod.engine import fileio

    # This process takes a share too, and every share is sent as one task: checking a small
    # file takes less time than a message to a worker. Shares are balanced by size, largest
    # files first.
    sizes = {f: _size(f) for f in files}
    shares: list = [[] for _ in range(jobs)]
    loads = [0] * jobs
    for f in sorted(files, key=sizes.get, reverse=True):
        i = loads.index(min(loads))
        shares[i].append(f)
        loads[i] += sizes[f] + 2048  # a file costs something whatever its size
    # Workers stop when this process dies, or the run is interrupted (codemod.frontends.workers).
    # The pool's threads and processes start with SIGINT/SIGTERM held back (they inherit the
    # mask): a signal is handled by this thread only, never in the middle of a write.
    shared = stop.shared() if stop is not None else None
    with fileio.held_signals():
        pool = ProcessPoolExecutor(max_workers=jobs - 1, mp_context=workers.pool_context(),
                                   initializer=workers.init_worker, initargs=(os.getpid(), shared))
        try:
            others = [pool.submit(workers.work_on, work, share) for share in shares[1:]]
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise
    with pool:
        results = _padded(_collect(workers.each_until_stopped(work, shares[0]), len(shares[0]), show),
                          len(shares[0]))  # the others keep pace
        for share, future in zip(shares[1:], others):
            try:
                results += _padded(future.result(), len(share))
            except BrokenProcessPool:  # a worker stopped by the signal before it started
                if stop is None or not stop.requested:
                    raise
                results += [None] * len(share)
    done = dict(zip([f for share in shares for f in share], results))
    return [done[f] for f in files]


def _padded(results: list, size: int) -> list:
    return list(results) + [None] * (size - len(results))


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _collect(results, total: int, show: bool) -> list:
    if not show:
        return list(results)
    from rich.console import Console
    from rich.progress import Progress

    from codemod.engine.fileio import held_signals

    collected = []
    bar = Progress(transient=True, console=Console(stderr=True))
    with held_signals():  # its refresh thread never takes a signal meant for this one
        bar.start()
    try:
        task = bar.add_task("inplacefix", total=total)
        for r in results:
            collected.append(r)
            bar.advance(task)
    finally:
        bar.stop()
    return collected


def _errors(results) -> int:
    """Print every error (whole files, and notebook cells left alone); return how many.
    Notices (files skipped on purpose) are printed too, and are not errors."""
    for r in results:
        for notice in r.notices:
            typer.echo(f"{r.path}: notice: {notice}", err=True)
    count = 0
    for r in results:
        for error in ([r.error] if r.error is not None else []) + r.skipped_parts:
            typer.echo(f"{r.path}:{error.line}:{error.column + 1}: error: {error.message}", err=True)
            count += 1
    return count


OutputFormatOpt = typer.Option(None, "--output-format", help="How findings are printed (default: concise).",
                               show_default=False)
LegacyFormatOpt = typer.Option(None, "--format", help="Deprecated: use --output-format (text is concise).")
ExitZeroOpt = typer.Option(False, "--exit-zero", help="Exit 0 even when findings remain (2 still means the tool failed).")
QuietOpt = typer.Option(False, "-q", "--quiet", help="Print findings (or diffs) and errors, nothing else.")
ShowFixesOpt = typer.Option(False, "--show-fixes", help="Show the fix each finding offers (fix: list what was fixed).")


def _output_format(output_format: Optional[OutputFormat], legacy: Optional[Format]) -> Optional[OutputFormat]:
    """``--output-format``, or the deprecated ``--format`` (text, json, sarif) still honoured;
    None when neither is given (then the ``output-format`` setting decides, see :func:`_format_of`)."""
    if legacy is not None:
        typer.echo("warning: `--format` is deprecated; use `--output-format`", err=True)
        legacy_as = OutputFormat.concise if legacy is Format.text else OutputFormat(legacy.value)
        if output_format not in (None, legacy_as) and {output_format, legacy_as} != {OutputFormat.concise,
                                                                                       OutputFormat.text}:
            typer.echo("error: --format and --output-format disagree; give --output-format alone", err=True)
            raise typer.Exit(2)
        return OutputFormat(legacy.value)
    return output_format


def _format_of(chosen: Optional[OutputFormat], settings) -> Optional[OutputFormat]:
    """The command line's format, else the ``output-format`` setting's, else None."""
    if chosen is not None:
        return chosen
    return OutputFormat(settings.output_format) if settings.output_format else None


def _edits_for(fmt: OutputFormat, show_fixes: bool) -> bool:
    """Whether findings need their fix's edit: the formats that print it."""
    return fmt in (OutputFormat.json, OutputFormat.json_lines, OutputFormat.sarif, OutputFormat.full) or show_fixes


def _write_output(path: Optional[pathlib.Path], text: Union[str, bytes]) -> None:
    """Standard output, or ``--output-file`` replaced whole (never half-written). Bytes (a diff)
    are written as they are: ``git apply`` matches the files' own bytes."""
    if path is None:
        if isinstance(text, bytes):
            sys.stdout.flush()
            out = getattr(sys.stdout, "buffer", None)
            if out is not None:
                out.write(text)
                out.flush()
            else:  # a stream of text only
                sys.stdout.write(text.decode("utf-8", "replace"))
        else:
            sys.stdout.write(text)
        return
    import tempfile

    data = text if isinstance(text, bytes) else text.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:200]}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        typer.echo(f"error: {path}: cannot write the output: {exc.strerror or exc}", err=True)
        raise typer.Exit(2)


@app.command()
def check(
    paths: Optional[List[pathlib.Path]] = PathsArg,
    select: Optional[List[str]] = SelectOpt,
    extend_select: Optional[List[str]] = ExtendSelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
    output_format: Optional[OutputFormat] = OutputFormatOpt,
    legacy_format: Optional[Format] = LegacyFormatOpt,
    output_file: Optional[pathlib.Path] = typer.Option(
        None, "-o", "--output-file", help="Write the findings to this file instead of standard output."),
    statistics: bool = typer.Option(False, "--statistics", help="Count the findings of each rule instead of listing them."),
    show_fixes: bool = ShowFixesOpt,
    show_skipped: bool = SkippedOpt,
    unsafe_fixes: Optional[bool] = UnsafeOpt,
    exit_zero: bool = ExitZeroOpt,
    quiet: bool = QuietOpt,
    jobs: Optional[int] = JobsOpt,
    config: Optional[List[str]] = ConfigOpt,
    force_exclude: bool = ForceExcludeOpt,
    progress: bool = ProgressOpt,
    stdin_filename: Optional[pathlib.Path] = typer.Option(
        None, "--stdin-filename", help="With the path `-`: read the file from stdin, named this (for editors)."),
    notebooks: Optional[bool] = NotebooksOpt,
    cache: bool = CacheOpt,
    add_noqa: bool = typer.Option(False, "--add-noqa", help="Add `# noqa: CODE` comments to the lines of the findings."),
) -> None:
    """List in-place operations that can break autograd, with their fix and its safety."""
    chosen = _output_format(output_format, legacy_format)
    stdin = paths is not None and [str(p) for p in paths] == ["-"]
    settings = _settings([stdin_filename] if stdin and stdin_filename else paths, config, select, ignore,
                         unsafe_fixes, notebooks, extend_select=extend_select, force_exclude=force_exclude)
    fmt = _format_of(chosen, settings) or OutputFormat.concise
    if add_noqa:
        _add_noqa(paths, settings, jobs, progress, cache, quiet)
    edits = _edits_for(fmt, show_fixes)
    if stdin:
        name = str(stdin_filename or "-")
        excluded = False
        if stdin_filename:
            try:
                # (the run's settings: every configuration file above the name can exclude it)
                excluded = _force_excluded(settings, stdin_filename)
                settings = settings.for_file(name)  # its nearest configuration, its per-file ignores
            except ConfigError as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2)
        if excluded:
            results = []  # --force-exclude: an excluded name is not checked, even from stdin
        elif name.endswith(".ipynb"):
            from codemod.engine.notebook import process_notebook

            results = [process_notebook(sys.stdin.buffer.read(), name, settings, edits=edits)]
        else:
            results = [process_source(sys.stdin.buffer.read(), name, settings, edits=edits)]
    else:
        results = _run(paths, settings, fix=False, write=False, edits=edits, jobs=jobs,
                       progress=progress, cache=cache, quiet=quiet)
    if statistics:
        _write_output(output_file, stats_text(results, fmt, show_skipped))
    else:
        _write_output(output_file, render(fmt, results, show_skipped=show_skipped, show_fixes=show_fixes))
    machine = fmt in MACHINE
    failed = _errors(results) if not machine else sum((r.error is not None) + len(r.skipped_parts) for r in results)
    findings = [f for r in results for f in r.findings]
    if not machine and not quiet:
        typer.echo(check_summary(findings, settings.unsafe_fixes), err=True)
    if failed:
        raise typer.Exit(2)
    raise typer.Exit(1 if any(f.counts for f in findings) and not exit_zero else 0)


@app.command()
def fix(
    paths: Optional[List[pathlib.Path]] = PathsArg,
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff and write nothing."),
    unsafe_fixes: Optional[bool] = UnsafeOpt,
    select: Optional[List[str]] = SelectOpt,
    extend_select: Optional[List[str]] = ExtendSelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
    output_format: Optional[OutputFormat] = typer.Option(
        None, "--output-format", show_default=False,
        help="Print the findings that remain after the fix in this format (default: none; with --diff, "
             "the diff is printed instead)."),
    output_file: Optional[pathlib.Path] = typer.Option(
        None, "-o", "--output-file", help="Write the diff (with --diff) or the findings that remain to this file."),
    show_fixes: bool = ShowFixesOpt,
    exit_zero: bool = ExitZeroOpt,
    exit_non_zero_on_fix: bool = typer.Option(
        False, "--exit-non-zero-on-fix", help="Exit 1 when a fix was applied, even if nothing remains."),
    quiet: bool = QuietOpt,
    jobs: Optional[int] = JobsOpt,
    config: Optional[List[str]] = ConfigOpt,
    force_exclude: bool = ForceExcludeOpt,
    progress: bool = ProgressOpt,
    notebooks: Optional[bool] = NotebooksOpt,
    cache: bool = CacheOpt,
) -> None:
    """Apply the fixes (safe ones; unsafe ones too with --unsafe-fixes)."""
    if paths is not None and "-" in [str(p) for p in paths]:
        typer.echo("error: fix does not read stdin (`check - --stdin-filename NAME` does; "
                   "`check --output-format json` gives the edits)", err=True)
        raise typer.Exit(2)
    settings = _settings(paths, config, select, ignore, unsafe_fixes, notebooks, extend_select=extend_select,
                         force_exclude=force_exclude)
    results = _run(paths, settings, fix=True, write=not diff, edits=False, jobs=jobs,
                   progress=progress, cache=cache, quiet=quiet)
    changed = [r for r in results if r.changed and r.error is None]
    if diff and (changed or output_file is not None):
        _write_output(output_file, b"".join(result_diff(r) for r in changed))
    applied_ids = {id(f) for r in changed for f in r.applied}
    remaining = [f for r in results for f in r.findings if f.counts and id(f) not in applied_ids]
    failed = _errors(results)
    fmt = None if diff else _format_of(output_format, settings)
    if fmt is not None:
        # What remains, where it is now: the files are checked again as written (a fix may add
        # lines above a finding, or change what the others' analysis finds), as `check` would.
        after = results
        if changed or _edits_for(fmt, False):
            after = _run(paths, settings, fix=False, write=False, edits=_edits_for(fmt, False), jobs=jobs,
                         progress=progress, cache=cache, quiet=True)
        _write_output(output_file, render(fmt, after))
        remaining = [f for r in after for f in r.findings if f.counts]
        failed = failed or sum((r.error is not None) + len(r.skipped_parts) for r in after)
    if show_fixes and changed:
        typer.echo(_fixed_list(changed, would=diff), err=diff)
    if not quiet:
        typer.echo(
            fix_summary(len(applied_ids), len(changed), remaining, would=diff,
                        unsafe_fixes=settings.unsafe_fixes),
            err=True,
        )
    if failed:
        raise typer.Exit(2)
    if exit_non_zero_on_fix and applied_ids:
        raise typer.Exit(1)
    raise typer.Exit(1 if (remaining or (diff and changed)) and not exit_zero else 0)


def _fixed_list(changed, would: bool) -> str:
    """``--show-fixes``: what was fixed, per file and code (Ruff's shape)."""
    import collections

    from codemod.rules.registry import rule_name

    total = sum(len(r.applied) for r in changed)
    lines = [f"{'Would fix' if would else 'Fixed'} {total} finding{'' if total == 1 else 's'}:"]
    for r in changed:
        lines.append(f"- {r.path}:")
        for code, n in sorted(collections.Counter(f.code for f in r.applied).items()):
            lines.append(f"    {n} × {code} ({rule_name(code)})")
    return "\n".join(lines)


def _target_options(init, input_shape):
    import json as _json

    try:
        init_kwargs = _json.loads(init) if init else None
        shapes = [tuple(int(d) for d in s.split(",") if d.strip()) for s in input_shape] if input_shape else None
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    return init_kwargs, shapes


InitOpt = typer.Option(None, "--init", help='Constructor keywords as JSON, e.g. \'{"dim": 4}\'.')
ShapeOpt = typer.Option(None, "--input-shape", help="Shape of one random input, e.g. 2,4 (repeat for more).")
TimeoutOpt = typer.Option(120.0, "--timeout", help="Seconds each isolated run of your code may take.")
InputsGradOpt = typer.Option(False, "--inputs-require-grad", help="Inputs the harness makes require grad.")


@app.command()
def verify(
    target: str = typer.Argument(..., help="path/to/file.py::Name (a zero-argument callable or an nn.Module subclass)."),
    rewritten: Optional[pathlib.Path] = typer.Option(None, "--rewritten", help="Compare with this file instead of the tool's own rewrite."),
    unsafe_fixes: Optional[bool] = UnsafeOpt,
    select: Optional[List[str]] = SelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
    device: Optional[List[str]] = typer.Option(None, "--device", help="cpu, cuda; each named is required (default: cpu, and cuda when present, where a program that does not run on cuda as written decides nothing)."),
    float64: bool = typer.Option(False, "--float64", help="Run in float64."),
    rtol: Optional[float] = typer.Option(None, "--rtol", help="Relative tolerance (default by dtype)."),
    atol: Optional[float] = typer.Option(None, "--atol", help="Absolute tolerance (default by dtype)."),
    init: Optional[str] = InitOpt,
    input_shape: Optional[List[str]] = ShapeOpt,
    inputs_require_grad: bool = InputsGradOpt,
    timeout: float = TimeoutOpt,
    output_format: Format = FormatOpt,
    config: Optional[List[str]] = ConfigOpt,
) -> None:
    """Run the original and the rewritten code, each in a fresh process, and compare outputs,
    gradients and final state (runs your code). Exit 0 verified, 1 not verified or unproven,
    2 the tool could not run it."""
    import json as _json

    path = pathlib.Path(target.partition("::")[0])
    settings = _settings([path], config, select, ignore, unsafe_fixes)
    init_kwargs, shapes = _target_options(init, input_shape)
    from codemod.runtime.harness import HarnessError
    from codemod.runtime.verify import render_table, verify as run_verify

    try:
        result = run_verify(
            target, rewritten=str(rewritten) if rewritten else None, settings=settings,
            devices=device, float64=float64, rtol=rtol, atol=atol,
            init_kwargs=init_kwargs, input_shapes=shapes,
            inputs_require_grad=inputs_require_grad, timeout=timeout,
        )
    except HarnessError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    if output_format is Format.json:
        typer.echo(_json.dumps(result.to_json(), indent=2))
    else:
        typer.echo(render_table(result))
    raise typer.Exit(0 if result.verified else 1)


@app.command()
def locate(
    target: str = typer.Argument(..., help="path/to/file.py::Name, as for verify."),
    raise_on_conflict: bool = typer.Option(False, "--raise", help="Stop with a traceback at the offending in-place op."),
    init: Optional[str] = InitOpt,
    input_shape: Optional[List[str]] = ShapeOpt,
    inputs_require_grad: bool = InputsGradOpt,
    timeout: float = TimeoutOpt,
    output_format: Format = FormatOpt,
) -> None:
    """Run the target (in a fresh process) and name both lines of each conflict: where autograd
    saved the tensor, and where it was modified (runs your code). Exit 1 if a conflict is
    found, or the run dies with an in-place error the locator could not place."""
    import json as _json

    from codemod.runtime.harness import HarnessError
    from codemod.runtime.locate import locate_target

    init_kwargs, shapes = _target_options(init, input_shape)
    try:
        result = locate_target(target, raise_on_conflict=raise_on_conflict, init_kwargs=init_kwargs,
                               input_shapes=shapes, inputs_require_grad=inputs_require_grad, timeout=timeout)
    except HarnessError as exc:
        typer.echo(f"error: {exc}", err=True)
        if "::" not in target:
            typer.echo(f"(to run a script with its arguments: inplacefix run {target} [ARGS...])", err=True)
        raise typer.Exit(2)
    if result.traceback:  # --raise: the traceback ends on the bad line
        typer.echo(result.traceback.rstrip(), err=True)
    typer.echo(_json.dumps(result.to_json(), indent=2) if output_format is Format.json else result.render())
    raise typer.Exit(1 if result.found_something else 0)


@app.command(context_settings=_SCRIPT_CONTEXT)
def repair(
    ctx: typer.Context,
    target: Optional[str] = typer.Argument(None, help="path/to/file.py::Name, as for verify; or a script, then its arguments.", show_default=False),
    write: bool = typer.Option(False, "--write", help="Write the repaired file (default: print the diff)."),
    diff: bool = typer.Option(True, "--diff/--no-diff", help="Print the diff."),
    device: Optional[List[str]] = typer.Option(None, "--device", help="Devices for the verification, each required (default: as for verify)."),
    init: Optional[str] = InitOpt,
    input_shape: Optional[List[str]] = ShapeOpt,
    inputs_require_grad: bool = InputsGradOpt,
    timeout: float = TimeoutOpt,
    config: Optional[List[str]] = ConfigOpt,
    module: Optional[str] = typer.Option(None, "-m", help="Repair a module run as a script (`python -m`)."),
    max_backward: int = typer.Option(2, "--max-backward", min=1, help="Scripts: backward passes to run and compare."),
    output_format: Format = typer.Option(Format.text, "--output-format", "--format", help="Scripts: text or json."),
    allow_outside: Optional[List[pathlib.Path]] = typer.Option(
        None, "--allow-outside", help="FILE::Name: a folder outside the target's project (an installed package) "
                                      "whose files repair may change too."),
    meaning: Meaning = typer.Option(
        Meaning.as_computed, "--meaning",
        help="Step-order conflicts (an optimizer step between a forward and its backward): as-computed, the "
             "later loss's gradients through the values its forward used (step moved after the backward, or "
             "gradients taken before it); recompute, through the updated parameters (the forward through the "
             "stepped module run again after the step). Each is verified against its own reference."),
) -> None:
    """Locate each conflict, apply only the fix it needs, repeat until backward succeeds, and
    verify (runs your code, in fresh processes). FILE::Name, or a script with its arguments
    (`repair train.py --epochs 3 --write`; words after `--` all go to the script). Exit 0
    repaired and verified (or nothing to do), 1 not verified, unproven, or an in-place error
    that was not located, 2 error."""
    if module or (target is not None and "::" not in target):
        _repair_script(_script_from(target, module, ctx.args), write, diff, max_backward, timeout, output_format,
                       meaning.value)
    if target is None or ctx.args:
        typer.echo("error: give path/to/file.py::Name, or a script and its arguments", err=True)
        raise typer.Exit(2)
    from codemod.runtime import repair as repairing
    from codemod.engine.fileio import WriteRefused
    from codemod.runtime.harness import HarnessError
    from codemod.runtime.verify import render_table

    path = pathlib.Path(target.partition("::")[0])
    settings = _settings([path], config, None, None, None)
    init_kwargs, shapes = _target_options(init, input_shape)
    try:
        result = repairing.repair(target, settings=settings, devices=device, init_kwargs=init_kwargs,
                                  input_shapes=shapes, inputs_require_grad=inputs_require_grad, timeout=timeout,
                                  allow_outside=[str(p) for p in allow_outside or ()], meaning=meaning.value)
    except HarnessError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    typer.echo(repairing.render(result))
    if result.changed and diff:
        sys.stdout.write(repairing.diff(result, str(path)))
    if result.verification is not None:
        typer.echo(render_table(result.verification))
    if write and result.changed and result.verified:
        try:  # as read: encoding, BOM, every line's ending; all files or none, refused if one changed meanwhile
            written = repairing.write(result, path)
        except (WriteRefused, OSError) as exc:
            typer.echo(f"error: {path}: {getattr(exc, 'strerror', None) or exc} (no file written)", err=True)
            raise typer.Exit(2)
        for done in written:
            typer.echo(f"wrote {repairing._shown(str(done)) if done != path else path}")
    elif write and result.changed:
        typer.echo("not written: the repair is not verified", err=True)
    raise typer.Exit(0 if (result.verified or result.nothing_to_do) else 1)


def _no_sarif(output_format) -> None:
    if output_format is Format.sarif:
        typer.echo("error: --output-format sarif is for check; use text or json", err=True)
        raise typer.Exit(2)


def _script_from(target: Optional[str], module: Optional[str], extra: List[str]):
    """The script and its arguments (with ``-m``, every word after the module is an argument)."""
    from codemod.runtime.script import Script

    words = ([target] if target is not None else []) + list(extra)
    if module:
        return Script(module=module, args=tuple(words), cwd=os.getcwd())
    if not words:
        typer.echo("error: give a script (path/to/script.py [ARGS...]) or -m module", err=True)
        raise typer.Exit(2)
    return Script(path=words[0], args=tuple(words[1:]), cwd=os.getcwd())


@app.command(context_settings={**_SCRIPT_CONTEXT, "allow_interspersed_args": False})
def run(
    ctx: typer.Context,
    script: Optional[str] = typer.Argument(None, help="The script, then its own arguments.", show_default=False),
    module: Optional[str] = typer.Option(None, "-m", help="Run a module as a script, as `python -m` does."),
    max_backward: Optional[int] = typer.Option(None, "--max-backward", min=1,
                                               help="Stop after N backward passes (and the optimizer step after the last)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Kill the script after this many seconds."),
    output_format: Format = FormatOpt,
    meaning: Meaning = typer.Option(Meaning.as_computed, "--meaning",
                                    help="The suggested fix of a step-order conflict: as-computed or recompute "
                                         "(as for repair)."),
) -> None:
    """Run a script as `python script.py ARGS` would, under the locator (runs your code): at the
    first in-place, leaf or view error, print both lines and the suggested fix. Options go
    before the script. Exit 0 no conflict, 1 a conflict (or the script failed on its own), 2 error."""
    import json as _json

    from codemod.runtime.script import ScriptError, exit_code, render, run_script

    _no_sarif(output_format)
    job = _script_from(script, module, ctx.args)
    as_json = output_format is not Format.text
    try:
        result = run_script(job, max_backward=max_backward, timeout=timeout, capture=as_json, meaning=meaning.value)
    except ScriptError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    if as_json:
        typer.echo(_json.dumps(result.to_json(), indent=2))
    else:
        if result.traceback and not result.conflicts:
            sys.stderr.write(result.traceback)  # the script's own traceback, as python prints it
        typer.echo(render(result), err=not result.conflicts)
    raise typer.Exit(exit_code(result))


def _repair_script(job, write: bool, diff: bool, max_backward: int, timeout: float, output_format,
                   meaning: str = "as-computed") -> None:
    """``repair script.py ARGS``: see codemod.runtime.script_repair."""
    import json as _json

    from codemod.runtime.script import ScriptError
    from codemod.runtime.script_repair import render, repair_script, to_json, write_repaired

    _no_sarif(output_format)
    try:
        result = repair_script(job, max_backward=max_backward, timeout=timeout, meaning=meaning)
    except ScriptError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    written = write_repaired(result) if write else []  # through the guarded writer, as `fix` writes
    if output_format is not Format.text:
        typer.echo(_json.dumps(to_json(result), indent=2))
        raise typer.Exit(result.exit_code)
    typer.echo(render(result))
    if result.changed and diff:
        sys.stdout.write(result.diff())
    for path in written:
        typer.echo(f"wrote {os.path.relpath(path)}")
    for error in result.errors:  # an edit saved during the run, a read-only file: left alone
        typer.echo(f"error: {error}", err=True)
    if write and result.changed and not written and not result.errors:
        typer.echo("not written: the repair is not verified", err=True)
    raise typer.Exit(result.exit_code)


@app.command()
def lsp() -> None:
    """Run the language server over stdio (diagnostics, quick fixes, fix-all; never runs code)."""
    from codemod.frontends.lsp import main as serve

    serve()


RulesFormatOpt = typer.Option("text", "--output-format", help="text or json.")


def _rules_format(value: str) -> bool:
    """True for json; exit 2 for anything but text or json."""
    if value not in ("text", "json"):
        typer.echo(f"error: --output-format {value!r}: expected text or json", err=True)
        raise typer.Exit(2)
    return value == "json"


@app.command()
def rules(output_format: str = RulesFormatOpt) -> None:
    """List the rule codes and the reason codes."""
    import json as _json

    from codemod.rules.registry import code_url, table

    if _rules_format(output_format):
        typer.echo(_json.dumps({
            "rules": [{"code": code, "name": info.name, "summary": info.summary, "url": code_url(code),
                       "hazard": info.hazard, "possible": info.possible, "default": code.startswith("IPF1")}
                      for code, info in table().items()],
            "reasons": [{"code": code, "text": text} for code, text in REASONS.items()],
        }, indent=2))
        return
    typer.echo("Rules:")
    for code, info in table().items():
        typer.echo(f"  {code}  {info.name}")
    typer.echo("Reasons (why a candidate is not a safe fix):")
    for code, text in REASONS.items():
        typer.echo(f"  {code:20} {text}")


def _explanation(info) -> str:
    from codemod.rules.registry import documentation

    doc = documentation(info.rule)
    if info.possible:
        doc = (f"The possible-hazard form of {info.rule.CODE}: reported on request (`--select IPF2`, "
               f"off by default) where the write may modify a tensor autograd saved, but the analysis "
               f"cannot see it (a call it cannot see into, a value from the caller).\n\n{doc}")
    elif info.hazard:
        doc = f"The hazard form of {info.rule.CODE}: reported (and on by default) {info.rule.HAZARD_FORM}.\n\n{doc}"
    return doc


@app.command()
def rule(
    code: Optional[str] = typer.Argument(None, help="A rule code (IPF001) or name (augmented-assignment)."),
    all_rules: bool = typer.Option(False, "--all", help="Explain every rule."),
    output_format: str = RulesFormatOpt,
) -> None:
    """Explain one rule (or every one, with --all): what it does, why, an example, and when its
    fix is safe."""
    import json as _json

    from codemod.rules.registry import code_url, table

    as_json = _rules_format(output_format)
    if all_rules == (code is not None):
        typer.echo("error: give a rule code, or --all", err=True)
        raise typer.Exit(2)
    if all_rules:
        chosen = list(table().values())
    else:
        wanted = code.strip()
        info = table().get(wanted.upper()) or next((i for i in table().values() if i.name == wanted), None)
        if info is None:
            typer.echo(f"error: unknown rule {code!r} (see `inplacefix rules`)", err=True)
            raise typer.Exit(2)
        chosen = [info]
    if as_json:
        items = [{"code": i.code, "name": i.name, "summary": i.summary, "url": code_url(i.code),
                  "explanation": _explanation(i)} for i in chosen]
        typer.echo(_json.dumps(items if all_rules else items[0], indent=2))
        return
    pages = []
    for info in chosen:
        title = f"{info.code} {info.name}"
        pages.append(f"{title}\n{'=' * len(title)}\n\n{_explanation(info)}\n\nDocumentation: {code_url(info.code)}")
    typer.echo("\n\n".join(pages))


@app.command()
def clean(paths: Optional[List[pathlib.Path]] = typer.Argument(
        None, help="Folders to clean (default: the current folder).")) -> None:
    """Remove the cache folders (.inplacefix_cache) at or below the given folders; links are
    removed as links, never followed."""
    from codemod.engine.cache import clean as remove_caches

    removed = []
    for start in paths or [pathlib.Path(".")]:
        try:
            removed += remove_caches(start)
        except OSError as exc:
            typer.echo(f"error: {getattr(exc, 'filename', None) or start}: cannot remove: "
                       f"{exc.strerror or exc}", err=True)
            raise typer.Exit(2)
    for path in removed:
        typer.echo(f"removed {path}", err=True)


if __name__ == "__main__":  # pragma: no cover
    app()
