"""``python -m codemod``: the command line.

``-m`` puts the current folder first on ``sys.path``, and the current folder is usually the
project being checked: a ``json.py`` or ``typing.py`` there would be imported by the tool (and
run) instead of the standard library's. The static side never runs project code, so that entry
goes before anything else is imported, unless it is the folder the tool itself lives in.
"""

import os
import sys


def _drop_the_current_folder() -> None:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cwd = os.getcwd()
    sys.path[:] = [p for p in sys.path
                   if os.path.abspath(p or cwd) == here or os.path.abspath(p or cwd) != cwd]


_drop_the_current_folder()

from codemod.frontends.cli import app  # noqa: E402 - after the path is made safe

app(prog_name="inplacefix")
