"""Shared by the stop 53 (fresh53) drivers: the unpacked sources (`pip download --no-deps`, each wheel unzipped
without its dist-info into its own folder $FRESH53_SITE/<distribution>/, an sdist's package folder copied there;
nothing installed) and fresh52's `compile_alone` (top-level defs, classes or single methods of a shipped file
compiled alone, line numbers kept, statements replaced by line: the out-of-place control, or the flagged line
followed by `return ...` to stop right after it)."""

import glob
import os

import _fresh52

ROOT = os.environ.get("FRESH53_SITE", "/work/tmp/s53/fresh53-pk/site")
compile_alone = _fresh52.compile_alone


def src(relpath):
    """The shipped file `relpath` (as labels.tsv names it, from the package folder down)."""
    found = glob.glob(os.path.join(ROOT, "*", relpath))
    if len(found) != 1:
        raise SystemExit(f"{relpath}: {len(found)} copies under {ROOT}")
    return found[0]


def then(line, after):
    """The flagged statement `line` (as shipped) followed by `after`: to stop right after it."""
    return f"{line}\n{after}"
