"""The ``%%inplacefix`` cell magic, run through IPython's InteractiveShell (no Jupyter server)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("torch")
pytest.importorskip("IPython")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402


@pytest.fixture(params=["codemod", "codemod.frontends.ipython"])
def shell(request):
    shell = InteractiveShell.instance()
    shell.extension_manager.loaded.discard(request.param)
    result = shell.run_cell(f"%load_ext {request.param}", store_history=True)
    assert result.success and "inplacefix" in shell.magics_manager.magics["cell"]
    return shell


def cell(shell, out: str, pattern: str) -> str:
    """The text of the cell the report names (by its In [n] number)."""
    match = re.search(pattern.replace("N", r"(\d+)"), out)
    assert match, out
    return shell.history_manager.input_hist_raw[int(match.group(1))]


def test_magic_names_cell_and_line_of_both_sites(shell, capsys):
    shell.run_cell("import torch\n\ndef forward(w):\n    y = torch.sigmoid(w)\n    y += 1\n    return y",
                   store_history=True)
    result = shell.run_cell("%%inplacefix\nw = torch.ones(3, requires_grad=True)\nforward(w).sum().backward()",
                            store_history=True)
    out = capsys.readouterr().out
    assert result.success  # the magic reported the error instead of raising it
    saved = cell(shell, out, r"saved    cell In \[N\], line 4: y = torch.sigmoid\(w\)")
    modified = cell(shell, out, r"modified cell In \[N\], line 5: y \+= 1")
    assert saved == modified and saved.startswith("import torch\n\ndef forward(w):")
    assert "+    y = y + 1" in out  # the fix, as a diff of that cell


def test_magic_sites_in_the_magic_cell_itself(shell, capsys):
    shell.run_cell("%%inplacefix\nimport torch\nw = torch.ones(2, requires_grad=True)\nw.mul_(2)\n",
                   store_history=True)
    out = capsys.readouterr().out
    assert "leaf tensor" in out
    assert cell(shell, out, r"modified cell In \[N\], line 3: w.mul_\(2\)").startswith("%%inplacefix")
    assert "+with torch.no_grad():\n+    w.mul_(2)" in out


def test_other_errors_and_clean_cells_are_untouched(shell, capsys):
    ok = shell.run_cell("%%inplacefix\nimport torch\nz = (torch.ones(2, requires_grad=True) * 3).sum()\nz.backward()\n",
                        store_history=True)
    assert ok.success and shell.user_ns["z"].item() == 6.0
    bad = shell.run_cell("%%inplacefix\nraise ValueError('mine')\n", store_history=True)
    assert not bad.success and isinstance(bad.error_in_exec, ValueError)
    assert "inplacefix: " not in capsys.readouterr().out
