"""The language server never freezes the garbage collector (issue 27).

``gc.freeze()`` moves every object alive at that moment out of the cyclic collector's sight for
good: right for a one-shot ``check`` that ends when its files are done (what it imported and the
trees it parsed once for two passes), wrong for a process that lives for hours and keeps
dropping what it analysed, where each freeze would keep whatever cycles were alive then. The
real server runs here (``lsp.main()``, over stdio, with its workspace index), watched after
each analysis and each index build by a wrapper that only reads ``gc.get_freeze_count()``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from .lsp_wire import Wire

WATCHED = textwrap.dedent("""\
    import gc
    import sys
    import threading

    from codemod.frontends import lsp, lsp_project

    LINES = threading.Lock()  # the analysis and the index run in two threads: one whole line each


    def watched(what, call):
        def run(*args, **kwargs):
            try:
                return call(*args, **kwargs)
            finally:
                with LINES:
                    sys.stderr.write(f"frozen after {what} {gc.get_freeze_count()}\\n")
                    sys.stderr.flush()
        return run


    lsp.diagnose = watched("diagnose", lsp.diagnose)
    lsp_project.WorkspaceIndex.build = watched("index", lsp_project.WorkspaceIndex.build)
    lsp.main()
    """)

A = "import torch\n\n\ndef squash(x):\n    y = torch.sigmoid(x)\n    y.mul_(2)\n    return y\n"
B = "import torch\n\nfrom a import squash\n\n\ndef run(x):\n    return squash(x)\n"


class WatchedWire(Wire):
    def __init__(self, cwd, stderr) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", WATCHED], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=stderr, cwd=cwd)
        self._buffer = b""
        self.received = []
        self._next_id = 100


def test_the_server_never_freezes_the_collector(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text(A)
    (workspace / "b.py").write_text(B)
    log = tmp_path / "stderr.txt"
    with open(log, "wb") as stderr:
        wire = WatchedWire(workspace, stderr)
        try:
            wire.initialize(workspace.as_uri())
            uri = (workspace / "a.py").as_uri()
            wire.open(uri, A)
            assert [d["code"] for d in wire.diagnostics(uri, 1)] == ["IPF103"]
            wire.wait_for(lambda m: m.get("method") == "window/logMessage"
                          and "index" in m["params"]["message"], 60, "the index's log message")
            wire.answer(wire.request("shutdown"))
            wire.notify("exit")
            assert wire.process.wait(timeout=30) == 0
        finally:
            wire.close()
    seen = [line.split() for line in log.read_text().splitlines() if line.startswith("frozen after")]
    assert {what for _, _, what, _ in seen} == {"diagnose", "index"}, log.read_text()
    assert all(count == "0" for _, _, _, count in seen), seen


KEEP = textwrap.dedent("""\
    import gc
    import sys

    from codemod.analysis.source import Source
    from codemod.engine import parsed

    if sys.argv[1] == "one-shot":
        parsed.one_shot(True)
    for i in range(3):
        data = b"x = %d\\n" % i
        parsed.keep(data, Source(data))
    print(gc.get_freeze_count())
    """)


def test_the_parse_once_cache_freezes_only_in_a_one_shot_run():
    # the index pass of a process that did not say it ends with its run (any but the CLI's)
    counts = {}
    for how in ("unsaid", "one-shot"):
        run = subprocess.run([sys.executable, "-c", KEEP, how], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        counts[how] = int(run.stdout)
    assert counts["unsaid"] == 0 and counts["one-shot"] > 0, counts
