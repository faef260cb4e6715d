"""Summaries of callees imported from installed libraries (``engine.libraries``): a tiny fake
installed package on the search path, real files, the real CLI."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

import codemod
from codemod.engine.libraries import Libraries, search_paths, site_packages

NORMS = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight)


class Shift(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return x + self.bias


class CastNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, h):
        h = h.to(torch.float32)
        variance = h.pow(2).mean(-1, keepdim=True)
        return self.weight * (h * torch.rsqrt(variance + 1e-6))


class Act(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.net = nn.Sequential(nn.Sigmoid(), nn.Dropout(0.1, inplace=inplace))

    def forward(self, x):
        return self.net(x)
'''

HELPERS = '''import functools


def swap(cls):
    return cls


@swap
class Swapped:
    def forward(self, x):
        return x * 2.0


def add_one_(x):
    x.add_(1)
    return x


def fresh(x):
    return x + 1
'''

USER = '''import torch.nn as nn

from fakelib import Norm, Shift


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = Norm(d)
        self.shift = Shift(d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)
        h += self.norm(h)
        g = self.proj(h)
        g += self.shift(g)
        return g
'''


@pytest.fixture
def project(tmp_path):
    """``site/fakelib`` (re-exporting from ``norms`` and ``helpers``), a pyproject.toml that
    puts ``site`` on the search path, and ``user.py`` using it."""
    lib = tmp_path / "site" / "fakelib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("from .norms import Norm, Shift, Act, CastNorm\nfrom .helpers import add_one_, fresh\n")
    (lib / "norms.py").write_text(NORMS)
    (lib / "helpers.py").write_text(HELPERS)
    (tmp_path / "pyproject.toml").write_text('[tool.inplacefix]\nlibrary-paths = ["site"]\n')
    (tmp_path / "user.py").write_text(USER)
    return tmp_path


def check(root: pathlib.Path, *args: str, files=("user.py",)) -> list:
    """(code, row, message, status) of the findings of ``check`` run in ``root``."""
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--format", "json", *args, *files],
                         capture_output=True, text=True, cwd=root)
    assert run.returncode in (0, 1), run.stderr
    return [(f["code"], f["location"]["row"], f["message"], f["status"]) for f in json.loads(run.stdout)["findings"]]


def test_a_library_module_that_saves_its_input_is_a_proven_hazard(project):
    found = check(project, "--no-cache")
    assert [(c, r) for c, r, _, _ in found] == [("IPF101", 15)]
    assert "saved for backward by `fakelib.norms.Norm.forward via torch.nn.functional.layer_norm" in found[0][2]
    # the same module saving nothing (`x + self.bias`) is no hazard, proven or possible
    assert not [f for f in check(project, "--no-cache", "--select", "IPF1,IPF2") if f[1] == 17]


def test_without_library_summaries_the_callee_is_unseen(project):
    (project / "pyproject.toml").write_text('[tool.inplacefix]\nlibrary-paths = ["site"]\nlibrary-summaries = false\n')
    found = check(project, "--no-cache", "--select", "IPF1,IPF2")
    assert [(c, r) for c, r, _, _ in found] == [("IPF201", 15), ("IPF201", 17)]
    assert all("cannot see into" in m for _, _, m, _ in found)


def test_an_unresolvable_import_stays_unknown(project):
    (project / "user.py").write_text(USER.replace("from fakelib import", "from nolib import"))
    found = check(project, "--no-cache", "--select", "IPF1,IPF2")
    assert [(c, r) for c, r, _, _ in found] == [("IPF201", 15), ("IPF201", 17)]


def test_a_c_extension_or_bytecode_only_module_stays_unknown(project):
    lib = project / "site" / "fakelib"
    (lib / "norms.py").rename(lib / "_norms.cpython-312-x86_64-linux-gnu.so")  # not a .py: never read
    assert Libraries((str(project / "site"),))("fakelib.norms.Norm") is None
    assert Libraries((str(project / "site"),)).find_source("fakelib.norms") is None


def test_torch_and_the_tool_itself_are_never_read_as_libraries():
    import torch

    libraries = Libraries((str(pathlib.Path(torch.__file__).parent.parent), *sys.path))
    assert libraries.find_source("torch.nn.modules.normalization") is None
    assert libraries.find_source("codemod.engine.libraries") is None
    assert libraries.find_source("json.decoder") is not None  # the resolver itself works


def test_re_exports_are_followed_and_summaries_say_what_the_callee_does(project):
    libraries = Libraries((str(project / "site"),))
    norm = libraries("fakelib.Norm")  # fakelib/__init__.py: from .norms import Norm
    assert norm is not None and norm.of == "class" and norm.inputs == ("yes",)
    assert norm.name == "fakelib.norms.Norm.forward"
    shift = libraries("fakelib.Shift")
    assert shift is not None and shift.inputs == ("no",) and shift.output == "no" and shift.returns == "fresh"
    add = libraries("fakelib.add_one_")
    assert add is not None and add.returns == "input" and add.mutates == (0,) and add.of == "function"
    fresh = libraries("fakelib.fresh")
    assert fresh is not None and fresh.returns == "fresh" and fresh.mutates == ()
    assert libraries("fakelib.Missing") is None and libraries("fakelib.norms.F") is None
    # a decorator may swap what runs (transformers' `@use_kernel_forward_from_hub`): unknown
    assert libraries("fakelib.helpers.Swapped") is None


def test_a_constructor_argument_the_library_cannot_see_is_unknown(project):
    """``Act(inplace=False)`` by default: a caller elsewhere may pass True (then the in-place
    dropout writes into the sigmoid's saved output), so whether its output is saved is
    unknown, not "no" (the file's own default is not a proof)."""
    act = Libraries((str(project / "site"),))("fakelib.Act")
    assert act is not None and act.output == "unknown"


def test_the_cache_is_used_the_second_time_and_follows_a_changed_library_file(project, tmp_path):
    cache = str(tmp_path / "cache")
    site = (str(project / "site"),)
    first = Libraries(site, cache)
    assert first("fakelib.Norm") is not None
    assert (first.computed, first.hits) == (2, 0)  # __init__.py (a re-export), then norms.py
    second = Libraries(site, cache)
    assert second("fakelib.Norm") == first("fakelib.Norm")
    assert (second.computed, second.hits) == (0, 2)
    norms = project / "site" / "fakelib" / "norms.py"
    norms.write_text(NORMS.replace("return F.layer_norm(x, self.weight.shape, self.weight)", "return x * 2.0"))
    third = Libraries(site, cache)
    changed = third("fakelib.Norm")
    assert changed is not None and changed.inputs == ("no",)
    assert (third.computed, third.hits) == (1, 1)


def test_the_result_cache_follows_a_changed_library_file(project):
    assert [r for _, r, _, _ in check(project)] == [15]  # the cache is on by default
    assert [r for _, r, _, _ in check(project)] == [15]  # (from it)
    norms = project / "site" / "fakelib" / "norms.py"
    norms.write_text(NORMS.replace("return F.layer_norm(x, self.weight.shape, self.weight)", "return x * 2.0"))
    assert check(project) == []


def test_a_library_callee_that_returns_its_input_keeps_a_fix_unsafe(project):
    """``y = add_one_(x)`` hands back x itself: rewriting ``y *= 3`` out of place would hide
    the write from x, which is read after it (manual: view-alias, as its summary shows). Imported
    from the library it is no safer than written in the file."""
    body = "\n\ndef f(w: torch.Tensor):\n    x = w * 2\n    y = add_one_(x)\n    y *= 3\n    return x, y\n"
    (project / "user.py").write_text("import torch\nfrom fakelib import add_one_\n" + body)
    imported = [(f[0], f[3]) for f in check(project, "--no-cache", "--select", "IPF")]
    (project / "user.py").write_text("import torch\n" + HELPERS[HELPERS.index("def add_one_"):] + body)
    local = [(f[0], f[3]) for f in check(project, "--no-cache", "--select", "IPF")]
    assert imported == local == [("IPF001", "manual")]


def test_search_paths_take_the_setting_the_project_venv_and_virtual_env_first(tmp_path, monkeypatch):
    venv = tmp_path / ".venv"
    sp = venv / "lib" / "python3.11" / "site-packages"
    (sp / "editable_src").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (sp / "_editable.pth").write_text("editable_src\nimport os\n")
    other = tmp_path / "other"
    other_sp = other / "Lib" / "site-packages"
    other_sp.mkdir(parents=True)
    (other / "pyvenv.cfg").write_text("")
    (tmp_path / "extra").mkdir()
    monkeypatch.setenv("VIRTUAL_ENV", str(other))
    monkeypatch.chdir(tmp_path)
    found = search_paths(("extra",), str(tmp_path))
    assert list(found[:4]) == [str(tmp_path / "extra"), str(sp), str(sp / "editable_src"), str(other_sp)]
    tool = str(pathlib.Path(codemod.__file__).resolve().parent.parent)  # the tool's own folder is left out
    assert set(sys.path) - {""} - set(found) == {p for p in sys.path if p and not os.path.isdir(p)
                                                 or str(pathlib.Path(p).resolve()) == tool}
    assert site_packages(tmp_path / "extra") == []  # no pyvenv.cfg: no virtualenv


def test_the_settings_keys_are_checked(project):
    (project / "pyproject.toml").write_text('[tool.inplacefix]\nlibrary-summaries = "no"\n')
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "user.py"], capture_output=True, text=True,
                         cwd=project)
    assert run.returncode == 2 and "library-summaries" in run.stderr
    (project / "pyproject.toml").write_text('[tool.inplacefix]\nlibrary-paths = "site"\n')
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "user.py"], capture_output=True, text=True,
                         cwd=project)
    assert run.returncode == 2 and "library-paths" in run.stderr and "folders" in run.stderr


def test_several_files_of_a_run_share_the_library_summaries(project):
    """With a project index (two files), the library callee is summarized the same way."""
    (project / "other.py").write_text("def helper(x):\n    return x\n")
    found = check(project, "--no-cache", files=("user.py", "other.py"))
    assert [(c, r) for c, r, _, _ in found] == [("IPF101", 15)]


def test_a_cast_that_may_hand_the_input_back_leaves_the_summary_unknown(project):
    """LlamaRMSNorm's shape: ``h = h.to(torch.float32)`` is ``h`` itself for a float32 input,
    so ``h.pow(2)`` saves the caller's tensor (torch says so below). The summary must not say
    "saves nothing" (it did: the rebound name was not the parameter any more)."""
    import torch

    sys.path.insert(0, str(project / "site"))
    try:
        from fakelib import CastNorm  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(project / "site"))
        for name in [m for m in sys.modules if m == "fakelib" or m.startswith("fakelib.")]:
            del sys.modules[name]
    proj = torch.nn.Linear(4, 4)
    h = proj(torch.randn(2, 4))
    h += CastNorm(4)(h)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        h.sum().backward()
    cast = Libraries((str(project / "site"),))("fakelib.CastNorm")
    assert cast is not None and cast.inputs == ("unknown",)


REAL_SITE = sorted(pathlib.Path("/work/venvs/real/lib").glob("python3*/site-packages/timm"))


@pytest.mark.skipif(not REAL_SITE or not (REAL_SITE[0].parent / "transformers").is_dir(),
                    reason="timm and transformers installed in /work/venvs/real (bench's code bases)")
def test_real_libraries(tmp_path):
    """timm's RmsNorm saves its input (torch raises: checked by hand in the real venv): a proven
    hazard naming it; LlamaRMSNorm (decorated, and casting first) and timm's LayerNorm (a fast
    path it cannot see into) stay possible."""
    site = REAL_SITE[0].parent
    (tmp_path / "pyproject.toml").write_text(f'[tool.inplacefix]\nlibrary-paths = ["{site}"]\n')
    (tmp_path / "user.py").write_text(
        "import torch.nn as nn\nfrom timm.layers import LayerNorm\nfrom timm.layers.norm import RmsNorm\n"
        "from transformers.models.llama.modeling_llama import LlamaRMSNorm\n\n\n"
        "class Block(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
        "        self.ln = LayerNorm(d)\n        self.rms = RmsNorm(d)\n        self.llama = LlamaRMSNorm(d)\n"
        "        self.proj = nn.Linear(d, d)\n\n"
        "    def forward(self, x):\n        a = self.proj(x)\n        a += self.ln(a)\n"
        "        b = self.proj(a)\n        b += self.rms(b)\n        c = self.proj(b)\n        c += self.llama(c)\n"
        "        return c\n")
    found = check(tmp_path, "--no-cache", "--select", "IPF1,IPF2")
    assert [(c, r) for c, r, _, _ in found] == [("IPF201", 17), ("IPF101", 19), ("IPF201", 21)]
    assert "timm.layers.norm.RmsNorm.forward via torch.nn.functional.rms_norm" in found[1][2]


def test_namespace_packages_huge_files_and_unreadable_names(tmp_path):
    """A namespace package (no ``__init__.py``) is walked through to its modules but has no
    file of its own; a file over the size limit, or a name bound twice, gives nothing."""
    site = tmp_path / "site"
    (site / "nsp" / "inner").mkdir(parents=True)
    (site / "nsp" / "inner" / "mods.py").write_text(HELPERS)
    (site / "nsp" / "big.py").write_text(HELPERS + "#" * 1_100_000 + "\n")
    (site / "nsp" / "twice.py").write_text(HELPERS + "\n\nif True:\n    def fresh(x):\n        return x\n")
    libraries = Libraries((str(site),))
    assert libraries.find_source("nsp") is None and libraries.find_source("nsp.inner") is None
    found = libraries("nsp.inner.mods.fresh")
    assert found is not None and found.returns == "fresh"
    assert libraries.find_source("nsp.big") is not None and libraries("nsp.big.fresh") is None
    assert libraries("nsp.twice.fresh") is None and libraries("nsp.twice.add_one_") is not None
