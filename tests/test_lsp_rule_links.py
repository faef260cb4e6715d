"""The language server's links into the rule documentation, over stdio against the real
process: ``codeDescription`` on every diagnostic, hover on a rule code in a suppression comment,
and pull diagnostics (``textDocument/diagnostic``) for clients that ask instead of listening."""

from __future__ import annotations

import time

import pytest

from .lsp_wire import Wire
from .test_cli import BROKEN

DOCS = "https://inplacefix.readthedocs.io/en/latest/rules/"


@pytest.fixture
def wire(tmp_path):
    client = Wire(cwd=str(tmp_path))
    yield client
    client.close()


def test_diagnostics_link_to_the_rule_page(wire, tmp_path):
    path = tmp_path / "model.py"
    path.write_text(BROKEN)
    wire.initialize(root_uri=tmp_path.as_uri())
    wire.open(path.as_uri(), BROKEN)
    diagnostics = wire.diagnostics(path.as_uri(), 1)
    assert [d["codeDescription"]["href"] for d in diagnostics] == [
        DOCS + "augmented-assignment/", DOCS + "subscript-assignment/", DOCS + "augmented-assignment/",
        DOCS + "augmented-assignment/"]  # the last: IPF001 (a candidate, shown as a hint)


def test_hover_on_a_noqa_code(wire, tmp_path):
    text = "import torch  # ok 😀\nx = torch.ones(2)  # noqa: E501, IPF104\ny = 1  # inplacefix: ignore[IPF101]\n"
    path = tmp_path / "m.py"
    path.write_text(text)
    wire.initialize(root_uri=tmp_path.as_uri())
    wire.open(path.as_uri(), text)
    column = text.splitlines()[1].index("IPF104") + 2
    answer = wire.answer(wire.request("textDocument/hover", {"textDocument": {"uri": path.as_uri()},
                                                             "position": {"line": 1, "character": column}}))
    hover = answer["result"]
    assert hover["contents"]["kind"] == "markdown"
    assert "**IPF104** `subscript-assignment-hazard`" in hover["contents"]["value"]
    assert DOCS + "subscript-assignment/" in hover["contents"]["value"]
    start = text.splitlines()[1].index("IPF104")
    assert hover["range"] == {"start": {"line": 1, "character": start}, "end": {"line": 1, "character": start + 6}}
    column = text.splitlines()[2].index("IPF101")
    hover = wire.answer(wire.request("textDocument/hover", {"textDocument": {"uri": path.as_uri()},
                                                            "position": {"line": 2, "character": column}}))["result"]
    assert "augmented-assignment-hazard" in hover["contents"]["value"]
    for line, character in [(1, text.splitlines()[1].index("E501")), (0, 3), (1, 2)]:
        answer = wire.answer(wire.request("textDocument/hover", {"textDocument": {"uri": path.as_uri()},
                                                                 "position": {"line": line, "character": character}}))
        assert answer["result"] is None


def test_pull_diagnostics(wire, tmp_path):
    path = tmp_path / "model.py"
    path.write_text(BROKEN)
    answer = wire.initialize(root_uri=tmp_path.as_uri(), capabilities={"textDocument": {"diagnostic": {}}})
    assert answer["result"]["capabilities"]["diagnosticProvider"]["interFileDependencies"] is True
    wire.open(path.as_uri(), BROKEN)
    report = wire.answer(wire.request("textDocument/diagnostic", {"textDocument": {"uri": path.as_uri()}}))["result"]
    assert report["kind"] == "full"
    assert [d["code"] for d in report["items"]] == ["IPF101", "IPF104", "IPF101", "IPF001"]
    time.sleep(1)  # a client that pulls is not sent the same diagnostics again
    wire._read_one(time.monotonic() + 0.5)
    assert not [m for m in wire.received if m.get("method") == "textDocument/publishDiagnostics"]


def test_the_editor_applies_per_file_ignores_and_shows_no_unused_noqa_unasked(wire, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.inplacefix.per-file-ignores]\n"gen_*.py" = ["IPF104"]\n')
    path = tmp_path / "gen_model.py"
    text = BROKEN.replace("    z += 1\n", "    z += 1  # noqa: IPF101\n")
    path.write_text(text)
    wire.initialize(root_uri=tmp_path.as_uri())
    wire.open(path.as_uri(), text)
    assert [d["code"] for d in wire.diagnostics(path.as_uri(), 1)] == ["IPF101", "IPF101", "IPF001"]


def test_a_client_that_pulls_is_asked_to_pull_again_after_a_settings_change(wire, tmp_path):
    path = tmp_path / "model.py"
    path.write_text(BROKEN)
    wire.initialize(root_uri=tmp_path.as_uri(), capabilities={
        "textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": True}}})
    wire.open(path.as_uri(), BROKEN)
    wire.notify("workspace/didChangeConfiguration", {"settings": {"select": ["IPF104"]}})
    refresh = wire.wait_for(lambda m: m.get("method") == "workspace/diagnostic/refresh", 30, "a refresh request")
    wire.send(id=refresh["id"], result=None)
    report = wire.answer(wire.request("textDocument/diagnostic", {"textDocument": {"uri": path.as_uri()}}))["result"]
    assert [d["code"] for d in report["items"] if d["code"].startswith("IPF1")] == ["IPF104"]


def test_an_inplacefix_toml_change_is_taken(wire, tmp_path):
    (tmp_path / "inplacefix.toml").write_text('select = ["IPF104"]\n')
    path = tmp_path / "model.py"
    path.write_text(BROKEN)
    wire.initialize(root_uri=tmp_path.as_uri(), options={"candidates": "hidden"})
    wire.open(path.as_uri(), BROKEN)
    assert [d["code"] for d in wire.diagnostics(path.as_uri(), 1)] == ["IPF104"]
    (tmp_path / "inplacefix.toml").write_text('select = ["IPF101"]\n')
    seen = len(wire.received)
    wire.notify("workspace/didChangeWatchedFiles",
                {"changes": [{"uri": (tmp_path / "inplacefix.toml").as_uri(), "type": 2}]})
    again = wire.wait_for(lambda m: m in wire.received[seen:] and m.get("method") == "textDocument/publishDiagnostics",
                          30, "diagnostics after the change")
    assert [d["code"] for d in again["params"]["diagnostics"]] == ["IPF101", "IPF101"]
