"""Library copies: the original and one rewritten copy per fix tier, side by side.

``<work>/<variant>/`` holds a copy of every library package (and of ``torch/optim``'s kernel
modules as the package ``torch_optim_copy``), so ``PYTHONPATH=<work>/<variant>`` makes a
process import that copy instead of the installed one.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Dict, List, Optional

LIBRARIES = ("timm", "torchvision", "transformers", "diffusers", "kornia", "x_transformers")
# The code bases issue 24 first measured for precision (medical imaging, probabilistic programming,
# metrics, graph learning, equivariant networks, vision transformers): a second sweep of their own.
ISSUE24 = ("monai", "pyro", "torchmetrics", "torch_geometric", "e3nn", "vit_pytorch")
LIBRARY_SETS = {"models": LIBRARIES, "issue24": ISSUE24}
TORCH_OPTIM = "torch_optim_copy"
# torch.optim's single-tensor/foreach kernels are module-level functions: the shape issue 13
# saw broken. Its package __init__ re-imports torch.optim by absolute name, so the copy gets an
# empty one and cases import the modules directly.
TORCH_OPTIM_FILES = ("optimizer.py", "_functional.py", "sgd.py", "adam.py", "adamw.py", "radam.py", "nadam.py",
                     "adagrad.py", "rmsprop.py", "adamax.py", "asgd.py", "adadelta.py", "rprop.py")
TIERS = {"safe": [], "unsafe": ["--unsafe-fixes"]}
# Files the analysis does not finish in reasonable time: left out of the rewrite through the
# copy's own pyproject.toml, and listed in the report. (diffusers/loaders/unet.py was, until
# tensor kind walked cycles of bindings once: 0.1 s now.)
TOO_SLOW: tuple = ()
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


@dataclasses.dataclass
class FixRun:
    tier: str
    seconds: float
    returncode: int
    summary: str


def site_packages(python: str) -> pathlib.Path:
    out = subprocess.run([python, "-c", "import importlib.util as u, os; print(os.path.dirname(os.path.dirname(u.find_spec('timm').origin)))"],
                         capture_output=True, text=True, check=True)
    return pathlib.Path(out.stdout.strip().splitlines()[-1])


def copy_libraries(site: pathlib.Path, target: pathlib.Path, libraries: tuple = LIBRARIES) -> None:
    """A fresh copy of every library of the set (and, for the model libraries, of the
    torch.optim kernels) under ``target``."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in libraries:
        shutil.copytree(site / name, target / name, ignore=IGNORE)
    if libraries != LIBRARIES:
        return
    optim = target / TORCH_OPTIM
    optim.mkdir()
    (optim / "__init__.py").write_text('"""A copy of torch.optim\'s kernel modules (see bench/migration/copies.py)."""\n')
    for name in TORCH_OPTIM_FILES:
        shutil.copy2(site / "torch" / "optim" / name, optim / name)


def rewrite(folder: pathlib.Path, tier: str, tool_python: str, tool_root: pathlib.Path, jobs: int = 2) -> FixRun:
    """Run this worktree's ``inplacefix fix --select ALL`` (plus the tier's flags) over ``folder``."""
    excluded = ", ".join(f'"{p}"' for p in TOO_SLOW)
    (folder / "pyproject.toml").write_text(f"[tool.inplacefix]\nextend-exclude = [{excluded}]\n")
    env = dict(os.environ, PYTHONPATH=str(tool_root))
    cmd = [tool_python, "-m", "codemod", "fix", "--select", "ALL", *TIERS[tier], "--no-cache", "-j", str(jobs), str(folder)]
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tool_root)
    lines = (done.stdout + done.stderr).splitlines()
    tail = [line for line in lines if line.startswith(("Fixed", "Found", "No ", "Would"))]
    return FixRun(tier, time.perf_counter() - start, done.returncode, " / ".join(tail[-2:]) or " ".join(lines[-3:]))


def changed_files(original: pathlib.Path, rewritten: pathlib.Path) -> List[str]:
    """Paths (relative) of the .py files whose text differs between two copies."""
    out = []
    for path in sorted(original.rglob("*.py")):
        rel = path.relative_to(original)
        other = rewritten / rel
        if other.exists() and other.read_bytes() != path.read_bytes():
            out.append(str(rel))
    return out


def hunks(original: pathlib.Path, rewritten: pathlib.Path, rel: str) -> List[str]:
    """The changed lines of one file, as ``-old`` / ``+new`` lines with their line numbers."""
    a = (original / rel).read_text(encoding="utf-8").splitlines()
    b = (rewritten / rel).read_text(encoding="utf-8").splitlines()
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        old = " | ".join(s.strip() for s in a[i1:i2])
        new = " | ".join(s.strip() for s in b[j1:j2])
        out.append(f"{rel}:{i1 + 1}: `{old}` -> `{new}`")
    return out


def overlay(original: pathlib.Path, rewritten: pathlib.Path, rel_files: List[str], target: pathlib.Path) -> None:
    """A copy of ``original`` where only ``rel_files`` come from ``rewritten`` (for bisecting);
    files are hard-linked where possible to keep it cheap. Compiled ``__pycache__`` files come
    along (Python rewrites a stale one atomically, a new file, so the original's stays intact)."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(original, target, copy_function=_link_or_copy)
    for rel in rel_files:
        (target / rel).unlink()
        shutil.copy2(rewritten / rel, target / rel)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def prepare(work: pathlib.Path, python: str, tool_python: str, tool_root: pathlib.Path, jobs: int = 2,
            tiers: Optional[List[str]] = None, libraries: tuple = LIBRARIES) -> Dict[str, FixRun]:
    """Copy the libraries to ``work/original`` and ``work/<tier>``, and rewrite each tier's copy."""
    site = site_packages(python)
    copy_libraries(site, work / "original", libraries)
    runs = {}
    for tier in tiers or list(TIERS):
        copy_libraries(site, work / tier, libraries)
        runs[tier] = rewrite(work / tier, tier, tool_python, tool_root, jobs)
        print(f"[prepare] {tier}: {runs[tier].summary} ({runs[tier].seconds:.0f} s, exit {runs[tier].returncode})",
              file=sys.stderr, flush=True)
    return runs
