"""The cache's code digest covers the whole package, not only the engine's folder: a change to
the analysis (which decides the findings) must miss every cached result."""

from __future__ import annotations

import pathlib

from codemod.engine import cache


def test_code_digest_covers_the_analysis(monkeypatch):
    package = pathlib.Path(cache.__file__).resolve().parent.parent
    seen = []
    real = pathlib.Path.read_bytes

    def spy(self):
        seen.append(self.resolve())
        return real(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", spy)
    cache._code_digest()
    assert package / "analysis" / "hazard.py" in seen
    assert package / "rules" / "safety.py" in seen
