"""Shared by the stop 52 (fresh52b) drivers: the unpacked sources (`pip download --no-deps`, wheels unzipped
without their dist-info, an sdist's package folder copied; nothing installed) under $FRESH52B_SITE, batches
site, b2/site, b3/site; `compile_alone` and `src` are fresh52's (`_fresh52.py`), pointed there."""

import os

import _fresh52

ROOT = os.environ.get("FRESH52B_SITE", "/work/tmp/s52/fresh52b-pk")
_fresh52.ROOT = ROOT
_fresh52.SITES[:] = [os.path.join(ROOT, d) for d in ("site", "b2/site", "b3/site")]
compile_alone, src = _fresh52.compile_alone, _fresh52.src
