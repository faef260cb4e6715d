"""Is debugging on? One switch for every layer: ``inplacefix -v`` or ``INPLACEFIX_DEBUG=1``.

Off, an internal error costs one line on stderr and exit code 2; on, its traceback too. The
switch lives in the environment so that worker processes see the same answer as the main one.
"""

from __future__ import annotations

import os
import sys
import traceback

VARIABLE = "INPLACEFIX_DEBUG"


def enabled() -> bool:
    return os.environ.get(VARIABLE, "").strip().lower() not in ("", "0", "false", "no", "off")


def enable() -> None:
    os.environ[VARIABLE] = "1"


def print_traceback() -> None:
    """The traceback of the exception being handled, on stderr, when debugging is on."""
    if enabled():
        traceback.print_exc(file=sys.stderr)
