"""The project-wide index: what the other files of a run say about a file's functions.

Real files on disk and the real command: a helper only called under ``no_grad`` from another
module is grad-off (checked alone, its own file cannot know); re-exports and relative imports
are followed; a caller in another file that ignores the result makes the mutation a contract;
a grad-on caller anywhere keeps the finding; the cache follows changes in the other files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from codemod.analysis.project import ProjectIndex, module_name
from codemod.engine.project import build_index

INIT = textwrap.dedent('''\
    import torch


    def _normal(t, std):
        t.normal_(0, std)
        return t


    def fill_weights(model, std=0.02):
        for p in model.parameters():
            _normal(p, std)
            p.clamp_(-2 * std, 2 * std)


    def scale(t, k):
        t.mul_(k)
        return t
    ''')
MODEL = textwrap.dedent('''\
    import torch
    from torch import nn

    from pkg import fill_weights
    from .init import scale


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            with torch.no_grad():
                fill_weights(self)

        def forward(self, x):
            y = torch.sigmoid(self.fc(x))
            return scale(y * 1, 2.0)
    ''')


@pytest.fixture
def project(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .init import fill_weights\n")
    (pkg / "init.py").write_text(INIT)
    (pkg / "model.py").write_text(MODEL)
    return tmp_path


def findings(*paths, cwd):
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--select", "ALL", "--show-skipped",
                          "--format", "json", *map(str, paths)], capture_output=True, text=True, cwd=cwd)
    assert run.returncode in (0, 1), run.stderr
    return {(f["location"]["row"], f["reason"]) for f in json.loads(run.stdout)["findings"]
            if f["filename"].endswith("init.py")}


def test_module_names_follow_packages(project):
    assert module_name(project / "pkg" / "init.py") == "pkg.init"
    assert module_name(project / "pkg" / "__init__.py") == "pkg"


def test_callers_in_other_files_decide_grad_mode(project):
    alone = findings(project / "pkg" / "init.py", cwd=project)
    assert (12, "leaf-update") in alone  # p.clamp_ on a parameter: IPF005 wraps it in no_grad
    assert (5, "leaf-update") in alone  # the call at line 11 gives _normal's `t` a parameter
    together = findings(project / "pkg", cwd=project)
    assert (5, "no-grad-callers") in together and (12, "no-grad-callers") in together
    assert (16, "param-mutation") in together  # scale's result is used: the caller may rely on it


def test_one_grad_on_caller_anywhere_keeps_the_finding(project):
    (project / "train.py").write_text("import torch\nfrom pkg.init import fill_weights\n\n"
                                      "def setup(model):\n    fill_weights(model)\n")
    together = findings(project / "pkg", project / "train.py", cwd=project)
    assert (12, "no-grad-callers") not in together and (12, "leaf-update") in together


def test_a_file_the_file_pass_never_reads_still_decides_the_verdict(project):
    """Guard for an index gathered on demand: ``setup.py`` never names torch (the file pass
    skips it unparsed) and holds no candidate, yet its grad-on call of ``fill_weights``
    (through the package's re-export) keeps ``clamp_``'s finding; a copy of it under
    ``no_grad`` that does name torch makes every caller grad-off again."""
    (project / "setup.py").write_text("from pkg import fill_weights\n\n\ndef setup(model):\n    fill_weights(model)\n")
    together = findings(project / "pkg", project / "setup.py", cwd=project)
    assert (12, "no-grad-callers") not in together and (12, "leaf-update") in together
    (project / "setup.py").write_text("import torch\nfrom pkg import fill_weights\n\n\ndef setup(model):\n"
                                      "    with torch.no_grad():\n        fill_weights(model)\n")
    assert (12, "no-grad-callers") in findings(project / "pkg", project / "setup.py", cwd=project)


def test_re_exports_and_relative_imports_resolve(project):
    files = [str(p) for p in sorted((project / "pkg").glob("*.py"))]
    index = build_index(files)
    assert isinstance(index, ProjectIndex)
    assert index.canonical("pkg.fill_weights") == "pkg.init.fill_weights"
    callers = {c.caller for c in index.calls["pkg.init.fill_weights"]}
    assert callers == {"pkg.model.Net.__init__"}
    assert [c.grad_off for c in index.calls["pkg.init.scale"]] == [False]
    assert index.grad_off("pkg.init._normal") and not index.grad_off("pkg.init.scale")


def test_the_cache_follows_the_other_files(project):
    cached = lambda: findings(project / "pkg", cwd=project)  # noqa: E731 - the cache is on by default
    assert (12, "no-grad-callers") in cached() and (12, "no-grad-callers") in cached()
    model = project / "pkg" / "model.py"
    model.write_text(MODEL.replace("        with torch.no_grad():\n            fill_weights(self)",
                                   "        fill_weights(self)"))
    assert (12, "no-grad-callers") not in cached()


def test_the_index_digest_is_the_same_in_every_process(project):
    """The result cache key holds it: a digest that varied with Python's string hashing made
    every run miss the cache of the files it concerns."""
    (project / "pkg" / "use.py").write_text(
        "from pkg.init import scale\n\n\ndef twice(a, b, c, d):\n    z = scale(a, b)\n    return a, b, z\n")
    code = ("import sys; from codemod.engine.project import build_index\n"
            "files = sorted(str(p) for p in __import__('pathlib').Path(sys.argv[1]).rglob('*.py'))\n"
            "print(build_index(files).digest_for('pkg.init'))\n")
    digests = {subprocess.run([sys.executable, "-c", code, str(project)], capture_output=True, text=True,
                              env={**__import__("os").environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2", "3")}
    assert len(digests) == 1 and digests.pop().strip()


def test_cached_facts_are_data_never_code(project, tmp_path):
    """The index's cache holds JSON: an entry that is not (a pickle planted in a repository's
    cache folder) is a miss, never loaded."""
    import pickle

    files = [str(p) for p in sorted((project / "pkg").glob("*.py"))]
    cache = tmp_path / "cache"
    first = build_index(files, str(cache))
    entries = sorted((cache / "project").iterdir())
    assert entries and all(json.loads(e.read_text())["module"].startswith("pkg") for e in entries)
    marker = tmp_path / "ran"
    for entry in entries:
        entry.write_bytes(pickle.dumps(type("Evil", (), {"__reduce__": lambda self: (marker.touch, ())})()))
    again = build_index(files, str(cache))
    assert not marker.exists()
    assert again.grad_off("pkg.init._normal") == first.grad_off("pkg.init._normal")


USE = "from pkg.init import scale\n\n\ndef twice(a):\n    z = scale(a, 2.0)\n    return a, z\n"


def test_what_calls_pass_is_gathered_only_for_the_modules_asked(project):
    """The index pass leaves out what each call passes (most of it is never asked); the first
    question about a function's callers gathers it from their modules only, as the eager
    pass would have: another file reading the argument after the call relies on the mutation."""
    (project / "pkg" / "use.py").write_text(USE)
    files = [str(p) for p in sorted((project / "pkg").glob("*.py"))]
    index = build_index(files)
    assert not any(f.argued for f in index.modules.values())
    asked, loader = [], index.arguments
    index.arguments = lambda module, key, positions: asked.append(module) or loader(module, key, positions)
    assert index.grad_off("pkg.init._normal") and not asked  # grad mode needs no arguments
    assert index.callers_rely("pkg.init.scale", "t") and not index.callers_rely("pkg.init.scale", "k")
    assert sorted(asked) == ["pkg.model", "pkg.use"]  # the modules calling scale, once each
    from codemod.analysis.indexing import collect
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.source import Source

    eager = collect(SemanticModel(Source((project / "pkg" / "use.py").read_bytes())), "pkg.use",
                    frozenset(index.modules))
    gathered = {i: passed for (module, i), passed in index._passed.items() if module == "pkg.use"}
    assert gathered and all(eager.calls[i].args_read_after == passed.read_after for i, passed in gathered.items()) \
        and eager.calls[-1].args_read_after == frozenset({"0"}) and len(eager.calls) - 1 in gathered


def test_a_caller_changed_since_the_index_may_rely_on_the_mutation(project):
    """What a call passes is read from the file its facts were made from: a file changed since
    then (its key differs) tells nothing, and its calls may read the argument after."""
    (project / "pkg" / "use.py").write_text(USE.replace("return a, z", "return z"))
    files = [str(p) for p in sorted((project / "pkg").glob("*.py"))]
    index = build_index(files)
    (project / "pkg" / "use.py").write_text(USE.replace("return a, z", "return z") + "\n")
    assert index.callers_rely("pkg.init.scale", "t")
    assert not build_index(files).callers_rely("pkg.init.scale", "t")


def test_a_caller_in_another_file_reading_the_argument_keeps_the_mutation(project):
    alone = findings(project / "pkg", cwd=project)
    (project / "pkg" / "use.py").write_text(USE)
    assert (16, "callers-rely-on-mutation") not in alone
    assert (16, "callers-rely-on-mutation") in findings(project / "pkg", cwd=project)


def test_a_callers_edit_that_passes_the_same_keeps_the_callees_cached_result(project, tmp_path):
    """The result cache keys a file without what other files' calls pass; the answers that
    depend on it are kept with the result and checked: an edit of a caller that passes the same
    (a comment) keeps the callee's result, one that reads the argument after the call does not."""
    from codemod.config import Settings
    from codemod.engine.files import process_path

    use = project / "pkg" / "use.py"
    use.write_text(USE.replace("return a, z", "return z"))
    files = [str(p) for p in sorted((project / "pkg").glob("*.py"))]
    init, cache = str(project / "pkg" / "init.py"), str(tmp_path / "cache")

    def run():
        result = process_path(init, Settings(select=("ALL",)), False, False, False, cache, build_index(files, cache))
        return result.original is None, {(f.span.line, f.reason) for f in result.findings}  # (a hit has no text)

    first = run()
    assert first[0] is False and (16, "callers-rely-on-mutation") not in first[1]
    assert run() == (True, first[1])
    use.write_text(USE.replace("return a, z", "return z") + "# a comment\n")
    assert run() == (True, first[1])  # what use.py passes is the same: cached
    use.write_text(USE)  # reads `a` after the call now
    hit, found = run()
    assert not hit and (16, "callers-rely-on-mutation") in found


def test_the_answers_kept_with_a_result_say_whether_callers_elsewhere_run_with_grad_off(project):
    """What another file's call passes is read with whether its caller runs with grad off, which
    a third file may decide: the kept answer holds it, so a change there is a miss."""
    from codemod.engine.asked import Asking, answers_hold

    (project / "pkg" / "use.py").write_text(USE)
    files = [str(p) for p in sorted((project / "pkg").glob("*.py"))]
    asking = Asking(build_index(files))
    asking.calls_from_elsewhere("pkg.init.scale", "pkg.init")
    [[kind, _, _, shown]] = asking.asked
    assert kind == "elsewhere" and sorted(call[0] for call in shown) == ["pkg.model.Net.forward", "pkg.use.twice"]
    assert answers_hold(build_index(files), asking.asked)
    (project / "pkg" / "run.py").write_text("import torch\nfrom pkg.use import twice\n\n\n"
                                            "def main(x):\n    with torch.no_grad():\n        twice(x)\n")
    changed = build_index(files + [str(project / "pkg" / "run.py")])
    assert changed.grad_off("pkg.use.twice") and not answers_hold(changed, asking.asked)
