"""``inplacefix run`` on a script whose in-place error happens in a thread (issue 28, item 9):
Python only prints what ends a thread and exits 0; the run reports the conflict, both lines
named, and exits 1."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.script import Outcome, Script, exit_code, render, run_script  # noqa: E402

THREAD = """\
import threading, torch
def work():
    x = torch.ones(3, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()
t = threading.Thread(target=work, name="worker")
t.start(); t.join()
print("main done")
"""

# A Thread subclass with its own run(), and a script that installs its own excepthook (which
# prints nothing): the error is still the run's.
SUBCLASS = """\
import threading, torch
threading.excepthook = lambda args: None
class Worker(threading.Thread):
    def run(self):
        w = torch.ones(2, requires_grad=True)
        h = w.exp()
        h += 1
        h.sum().backward()
t = Worker(name="sub")
t.start(); t.join()
"""


def test_an_inplace_error_in_a_thread_is_located(tmp_path):
    (tmp_path / "thr.py").write_text(THREAD)
    run = run_script(Script(path="thr.py", cwd=str(tmp_path)), capture=True, timeout=120)
    assert run.stdout == "main done\n"
    assert "Exception in thread worker" in run.stderr  # printed as Python prints it
    assert run.outcome is Outcome.conflict and run.thread == "worker" and run.inplace_family
    assert exit_code(run) == 1
    (conflict,) = run.conflicts
    assert conflict["save"]["line"] == 4 and conflict["mutation"]["line"] == 5
    text = render(run)
    assert "thread 'worker'" in text and "thr.py:4" in text and "thr.py:5" in text
    assert "no in-place conflict" not in text
    assert run.suggestions and "y = y.mul(2)" in run.suggestions[0]["diff"]


def test_a_thread_subclass_with_its_own_excepthook(tmp_path):
    (tmp_path / "sub.py").write_text(SUBCLASS)
    run = run_script(Script(path="sub.py", cwd=str(tmp_path)), capture=True, timeout=120)
    assert run.outcome is Outcome.conflict and run.thread == "sub", (run.outcome, run.error)
    assert exit_code(run) == 1
    (conflict,) = run.conflicts
    assert conflict["save"]["line"] == 6 and conflict["mutation"]["line"] == 7
    assert "Traceback" not in run.stderr  # the script's own hook still decides what is printed
