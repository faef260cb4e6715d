"""Build the sdist and the wheel, check what they hold, install the wheel into a fresh virtualenv
and run it there, away from the source tree: ``check``, ``fix --diff`` and ``lsp``
(initialize / shutdown over stdio) on a bundled example.

    python scripts/check_wheel.py [--workdir DIR] [--keep]

Exit 0 when every check passes, 1 when one fails (each failure is printed), 2 when a step could
not run (the build or the install failed). The wheel's dependencies come from the package index
pip is configured with. ``tests/test_release.py`` runs this script.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "fixtures" / "augmented_assignment" / "blog_example2.in.py"


def version() -> str:
    namespace: dict = {}
    text = (ROOT / "codemod" / "__init__.py").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("__version__"))
    exec(line, namespace)
    return namespace["__version__"]


def run(argv, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, **kwargs)


def lsp_frames(*messages: dict) -> bytes:
    out = b""
    for message in messages:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


def parse_frames(data: bytes) -> list:
    messages = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length"))
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=pathlib.Path, help="where to build and install (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    work = args.workdir or pathlib.Path(tempfile.mkdtemp(prefix="inplacefix-wheel-"))
    work.mkdir(parents=True, exist_ok=True)
    failures: list = []

    def expect(ok: bool, what: str) -> None:
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what)

    try:
        want = version()
        dist = work / "dist"
        # The source is copied first (tracked and untracked files git does not ignore), so that
        # no build output is left in the tree and nothing ignored (a .venv) is packaged.
        src = work / "src"
        listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT)
        if listed.returncode != 0:
            print(f"error: git ls-files failed: {listed.stderr.strip()}")
            return 2
        for name in filter(None, listed.stdout.split("\0")):
            if not (ROOT / name).is_file():
                continue  # deleted in the work tree
            target = src / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)
        built = run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(dist),
                     str(src)])
        if built.returncode != 0:
            print(f"error: python -m build failed:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}")
            return 2
        wheel = dist / f"inplacefix-{want}-py3-none-any.whl"
        sdist = dist / f"inplacefix-{want}.tar.gz"
        expect(wheel.is_file(), f"wheel {wheel.name} built")
        expect(sdist.is_file(), f"sdist {sdist.name} built")
        if failures:
            return 1

        # What the wheel holds: every module of the package, the entry points, the version.
        sources = {str(p.relative_to(src)) for p in (src / "codemod").rglob("*.py")}
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
            info = f"inplacefix-{want}.dist-info"
            entry_points = z.read(f"{info}/entry_points.txt").decode()
            metadata = z.read(f"{info}/METADATA").decode()
        missing = sorted(sources - names)
        expect(not missing, f"the wheel holds every module of codemod/ ({len(sources)}){': missing ' + ', '.join(missing[:5]) if missing else ''}")
        for module in ("codemod/frontends/lsp.py", "codemod/frontends/lsp_fixall.py", "codemod/torch_api.py",
                       "codemod/__main__.py"):
            expect(module in names, f"the wheel holds {module}")
        stray = sorted(n for n in names if n.split("/")[0] in ("tests", "fixtures", "bench", "docs", "scripts"))
        expect(not stray, "the wheel holds no tests, fixtures, benchmarks or docs" + (f": {stray[:3]}" if stray else ""))
        expect("inplacefix = codemod.frontends.cli:app" in entry_points, "console script `inplacefix`")
        expect("[pytest11]" in entry_points and "codemod.frontends.pytest_plugin" in entry_points,
               "pytest plugin entry point")
        expect(f"\nVersion: {want}\n" in metadata, f"METADATA says version {want}")
        with tarfile.open(sdist) as t:
            members = {m.split("/", 1)[1] for m in t.getnames() if "/" in m}
        for needed in ("pyproject.toml", "README.md", "codemod/__init__.py", "codemod/frontends/lsp.py"):
            expect(needed in members, f"the sdist holds {needed}")

        # A fresh virtualenv, the wheel installed, run from a folder outside the source tree.
        venv = work / "venv"
        made = run([sys.executable, "-m", "venv", str(venv)])
        if made.returncode != 0:
            print(f"error: could not make a virtualenv: {made.stderr.strip()}")
            return 2
        bindir = venv / ("Scripts" if os.name == "nt" else "bin")
        python = bindir / "python"
        # without the caller's PYTHONPATH (the test suite names the source tree there): pip would see
        # the tree's egg-info as the package already installed and install nothing into the venv
        clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        installed = run([str(python), "-m", "pip", "install", "-q", str(wheel)], env=clean)
        if installed.returncode != 0:
            print(f"error: pip install of the wheel failed:\n{installed.stdout[-3000:]}\n{installed.stderr[-3000:]}")
            return 2
        project = work / "project"
        project.mkdir(exist_ok=True)
        example = project / "example.py"
        shutil.copyfile(EXAMPLE, example)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")
        tool = str(bindir / "inplacefix")

        where = run([str(python), "-c", "import codemod; print(codemod.__file__)"], cwd=project, env=env)
        expect(where.returncode == 0 and str(venv) in where.stdout and str(ROOT) not in where.stdout,
               f"codemod is imported from the virtualenv ({where.stdout.strip() or where.stderr.strip()})")
        shown = run([tool, "--version"], cwd=project, env=env)
        expect(shown.stdout.strip() == f"inplacefix {want}", f"`inplacefix --version` prints {want} ({shown.stdout.strip()})")
        checked = run([tool, "check", "--no-progress", "example.py"], cwd=project, env=env)
        expect(checked.returncode == 1 and "example.py:12:5: IPF101" in checked.stdout,
               f"`check` reports IPF101 and exits 1 (exit {checked.returncode}: {checked.stdout.strip()[:200]} {checked.stderr.strip()[:200]})")
        diffed = run([tool, "fix", "--diff", "--unsafe-fixes", "--no-progress", "example.py"], cwd=project, env=env)
        expect(diffed.returncode == 1 and "+    d = b = d * 5" in diffed.stdout,
               f"`fix --diff` prints the rewrite and exits 1 (exit {diffed.returncode}: {diffed.stdout.strip()[:300]})")
        expect(example.read_bytes() == EXAMPLE.read_bytes(), "`fix --diff` leaves the file as it was")
        init = {"processId": None, "rootUri": project.as_uri(), "capabilities": {}}
        wire = lsp_frames({"id": 1, "method": "initialize", "params": init},
                          {"method": "initialized", "params": {}},
                          {"id": 2, "method": "shutdown"}, {"method": "exit"})
        try:
            served = subprocess.run([tool, "lsp"], input=wire, capture_output=True, cwd=project, env=env, timeout=120)
            replies = {m.get("id"): m for m in parse_frames(served.stdout) if "id" in m}
            capabilities = replies.get(1, {}).get("result", {}).get("capabilities", {})
            expect(served.returncode == 0 and "codeActionProvider" in capabilities and "result" in replies.get(2, {}),
                   f"`lsp` answers initialize (capabilities: {sorted(capabilities)[:6]}) and shutdown, exit {served.returncode}")
        except subprocess.TimeoutExpired:
            expect(False, "`lsp` answers initialize and shutdown within 120 s")
    finally:
        if args.keep or args.workdir:
            print(f"work folder: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
