"""Verify every model fixture on every available device and print one table.

Usage: ``python scripts/verify_fixtures.py [--json OUT]``. Each fixture's header says which
target to run and whether its fix needs ``--unsafe-fixes`` (see fixtures/models/).
"""

from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from codemod.runtime.verify import default_devices  # noqa: E402
from codemod.testing import MODELS, run_model  # noqa: E402 - the fixtures' headers, read one way


def main() -> int:
    devices = default_devices()
    rows, docs, failures = [], [], 0
    for path in MODELS:
        h, result = run_model(path, devices)
        docs.append(result.to_json())
        failures += not result.verified
        cells = [path.stem, h["expect"]]
        for d in result.devices:
            grad = d.comparison.grad_abs
            saved = d.rewritten.cost.saved_bytes
            cells.append(f"{d.original.status}->{d.rewritten.status} ({d.reference}, grad "
                         f"{'-' if grad is None else f'{grad:.1g}'}, saved {saved} B)")
        cells.append(f"{result.cross_device:.1g}" if result.cross_device is not None
                     else ("n/a" if result.cross_device_note else "-"))
        cells.append(result.verdict.value)
        rows.append(cells)
    header = ["model", "expect", *devices, "cpu vs cuda", "verdict"]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"torch {torch.__version__}, devices: {', '.join(devices)}"
          + (f" ({torch.cuda.get_device_name()})" if torch.cuda.is_available() else ""))
    for r in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    print(f"{len(rows) - failures} of {len(rows)} verified")
    if "--json" in sys.argv:
        pathlib.Path(sys.argv[sys.argv.index("--json") + 1]).write_text(json.dumps(docs, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
