"""The language server over raw JSON-RPC on stdio, against the real process (issue 28): the
error responses the specification requires (item 14), settings errors said in the editor
(item 11), and big buffers analysed off the request path (item 13). Every wait has a deadline,
so a missing answer fails the test instead of hanging it."""

from __future__ import annotations

import pathlib
import time

import pytest

from .lsp_wire import Wire
from .test_lsp_load import children, module

def code_action_params(uri: str, line: int, only=("quickfix",)) -> dict:
    return {"textDocument": {"uri": uri},
            "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
            "context": {"diagnostics": [], "only": list(only)}}


@pytest.fixture
def wire():
    client = Wire()
    yield client
    client.close()


# --- item 14: JSON-RPC errors ---------------------------------------------------------------------

def test_a_request_with_invalid_params_is_answered_with_invalid_params(wire):
    init = wire.initialize()["id"]
    uri = "file:///tmp/inplacefix_wire/a.py"
    wire.open(uri, module(1))
    wire.diagnostics(uri, 1)
    bad = wire.request("textDocument/codeAction", {"textDocument": 5})
    error = wire.answer(bad, timeout=10)["error"]
    assert error["code"] == -32602 and "textDocument/codeAction" in error["message"]
    missing = wire.request("textDocument/codeAction", {"textDocument": {"uri": uri}})  # no range, no context
    assert wire.answer(missing, timeout=10)["error"]["code"] == -32602
    wire.notify("textDocument/didChange", {"textDocument": 3})  # a notification: never answered
    good = wire.request("textDocument/codeAction", code_action_params(uri, 5))  # the server goes on
    titles = [a["title"] for a in wire.answer(good, timeout=30)["result"]]
    assert titles[0] == "IPF101: Rewrite as `h = h + 1`"
    assert all("id" not in m or m["id"] in (init, bad, missing, good) for m in wire.received), wire.received


def test_requests_after_shutdown_are_answered_with_invalid_request(wire):
    wire.initialize()
    shutdown = wire.request("shutdown")
    assert wire.answer(shutdown, timeout=10)["result"] is None
    uri = "file:///tmp/inplacefix_wire/b.py"
    for method, params in [("textDocument/codeAction", code_action_params(uri, 0)), ("shutdown", None),
                           ("inplacefix/unknown", {}), ("textDocument/codeAction", {"textDocument": 5})]:
        error = wire.answer(wire.request(method, params), timeout=10)["error"]
        assert error["code"] == -32600, (method, error)
    wire.notify("exit")
    assert wire.process.wait(timeout=10) == 0


# --- item 11: settings errors in the editor --------------------------------------------------------

HAZARD = "import torch\n\n\ndef f(x):\n    h = torch.sigmoid(x)\n    h += 1\n    return h\n"


def message_naming(wire: Wire, words: str, timeout: float = 30) -> dict:
    return wire.wait_for(lambda m: m.get("method") == "window/showMessage" and words in m["params"]["message"],
                         timeout, f"window/showMessage naming {words!r}")["params"]


def codes(diagnostics) -> set:
    return {d.get("code") for d in diagnostics}


def test_an_invalid_pyproject_table_is_shown_and_the_defaults_said(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.inplacefix]\nignore = ["IPF101"]\nbogus = 1\n')
    (tmp_path / "m.py").write_text(HAZARD)
    wire = Wire()
    try:
        wire.initialize(root_uri=tmp_path.as_uri())
        wire.open((tmp_path / "m.py").as_uri(), HAZARD)
        shown = message_naming(wire, "bogus")
        assert shown["type"] == 1  # Error
        assert "pyproject.toml" in shown["message"] and "default settings" in shown["message"]
        assert "IPF101" in codes(wire.diagnostics((tmp_path / "m.py").as_uri(), 1))
    finally:
        wire.close()


def test_an_invalid_edit_keeps_the_last_valid_settings(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.inplacefix]\nignore = ["IPF101"]\n')
    uri = (tmp_path / "m.py").as_uri()
    (tmp_path / "m.py").write_text(HAZARD)
    wire = Wire()
    try:
        wire.initialize(root_uri=tmp_path.as_uri())
        wire.open(uri, HAZARD)
        assert "IPF101" not in codes(wire.diagnostics(uri, 1))
        pyproject.write_text('[tool.inplacefix]\nignore = ["IPF101"]\nselect = "IPF1"\n')  # not a list
        wire.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                               "contentChanges": [{"text": HAZARD + "\n"}]})
        shown = message_naming(wire, "select")
        assert shown["type"] == 1 and "last valid settings" in shown["message"]
        assert "IPF101" not in codes(wire.diagnostics(uri, 2))  # the ignored rule stays ignored
        pyproject.write_text('[tool.inplacefix]\nignore = ["IPF101"]\n')
        wire.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": pyproject.as_uri(), "type": 2}]})
        assert message_naming(wire, "valid again")["type"] == 3  # Info: noticed without a change of m.py
    finally:
        wire.close()


# --- item 13: a big buffer does not hold up the others ---------------------------------------------

@pytest.mark.skipif(not pathlib.Path("/proc/self/stat").exists(), reason="reads /proc")
def test_quick_fixes_elsewhere_are_answered_while_a_30000_line_buffer_is_analysed(wire):
    wire.initialize()
    small, big = "file:///tmp/inplacefix_wire/small.py", "file:///tmp/inplacefix_wire/big.py"
    wire.open(small, module(1))
    wire.diagnostics(small, 1)
    text = module(4300)  # 30,101 lines: its analysis takes a minute or more here
    assert text.count("\n") > 30_000
    wire.open(big, text)
    time.sleep(0.5)  # its analysis is under way
    start = time.monotonic()
    asked = wire.request("textDocument/codeAction", code_action_params(small, 5))
    actions = wire.answer(asked, timeout=30)["result"]
    took = time.monotonic() - start
    assert actions[0]["title"] == "IPF101: Rewrite as `h = h + 1`"
    assert took < 3, f"the quick fix waited {took:.1f} s for the big buffer"
    busy = children(wire.process.pid)
    assert busy, "the big buffer is analysed in a child process"
    # A newer version makes the running analysis stale: it is stopped, not waited for.
    wire.notify("textDocument/didChange", {"textDocument": {"uri": big, "version": 2},
                                           "contentChanges": [{"text": text.replace("h += 1", "h += 2", 1)}]})
    deadline = time.monotonic() + 5
    while busy & children(wire.process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not busy & children(wire.process.pid), "the stale analysis still runs"
    shutdown = wire.request("shutdown")
    assert wire.answer(shutdown, timeout=10)["result"] is None
    wire.notify("exit")
    assert wire.process.wait(timeout=10) == 0
    deadline = time.monotonic() + 5
    while children(wire.process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_big_buffer_gets_its_diagnostics_and_quick_fixes_from_its_process(wire):
    from codemod.frontends.lsp_big import BIG_LINES

    wire.initialize()
    uri = "file:///tmp/inplacefix_wire/just_big.py"
    text = module(BIG_LINES // 7 + 1)
    wire.open(uri, text)
    diagnostics = wire.diagnostics(uri, 1, timeout=120)
    assert len(diagnostics) == 2 * (BIG_LINES // 7 + 1)
    assert children(wire.process.pid), "analysed in the document's own process"
    asked = wire.request("textDocument/codeAction", code_action_params(uri, text.count("\n") - 4))  # the last h += 1
    titles = [a["title"] for a in wire.answer(asked, timeout=120)["result"]]
    assert titles == ["IPF101: Rewrite as `h = h + 1`", "Suppress IPF101 on this line"]
