"""Adding a rule is one file in ``codemod/rules/`` plus one fixture folder, nothing else.

The test writes a throwaway rule that visits ``With`` nodes (a node type no shipped rule
visits) with a trigger of its own, and its fixture folder; then, in fresh interpreters, the
rule's findings must come through ``check``, ``--format json``, the rule table, ``inplacefix
rule`` and the language server over stdio, and its fixture must pass the fixture spec. Both
files are removed afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from .conftest import FIXTURES, ROOT

RULE = textwrap.dedent('''\
    """IPF009 example-enable-grad: a throwaway rule written by tests/test_adding_a_rule.py."""

    from __future__ import annotations

    import ast

    from codemod.findings import Status
    from codemod.rules.base import Rule


    class ExampleEnableGrad(Rule):
        """Flag `with torch.enable_grad():` blocks.

        ## What it does
        Reports every ``with torch.enable_grad():`` statement.

        ## Why is this bad?
        It is not; this rule only shows how little it takes to add one.

        ## Example
        ```python
        with torch.enable_grad():
            y = f(x)
        ```

        ## Fix safety
        There is no fix.
        """

        CODE = "IPF009"
        NAME = "example-enable-grad"
        TRIGGERS = (rb"enable_grad",)

        def visit_With(self, node: ast.With) -> None:
            for item in node.items:
                expr = item.context_expr
                func = expr.func if isinstance(expr, ast.Call) else expr
                if self.model.torch_name(func) == "torch.enable_grad":
                    self.report(node, "`torch.enable_grad()` block", Status.MANUAL,
                                hazard="grad is forced on here")
    ''')

CASE = textwrap.dedent('''\
    import torch


    def f(x):
        with torch.enable_grad():
            y = x * 2
        return y
    ''')
EXPECTED = "with_block.in.py:5:5: IPF109 `torch.enable_grad()` block: grad is forced on here\n"

CHECK = textwrap.dedent('''\
    import json, subprocess, sys
    from codemod import testing
    from codemod.rules.registry import node_types, table
    import ast
    case = testing.FIXTURES / "example_enable_grad" / "with_block.in.py"
    assert ast.With in node_types()
    assert table()["IPF009"].name == "example-enable-grad"
    assert table()["IPF109"].name == "example-enable-grad-hazard"
    assert case.parent in testing.rule_folders() and case in testing.rule_cases()
    print(json.dumps(testing.mismatches(case)))
    ''')


def _lsp_diagnostics(path, text) -> list:
    """Open ``text`` as ``path`` in a real server over stdio; the first non-empty diagnostics."""
    proc = subprocess.Popen([sys.executable, "-m", "codemod", "lsp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT)

    def send(message):
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    def receive():
        length = 0
        while True:
            line = proc.stdout.readline()
            if not line:
                raise AssertionError("the server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(proc.stdout.read(length))

    uri = path.as_uri()
    try:
        send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        while receive().get("id") != 1:
            pass
        send({"method": "initialized", "params": {}})
        send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": text}}})
        for _ in range(50):
            message = receive()
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["diagnostics"]:
                return message["params"]["diagnostics"]
        raise AssertionError("no diagnostics")
    finally:
        proc.kill()
        proc.wait(10)


def test_a_new_rule_is_one_file_and_one_fixture_folder(tmp_path):
    rule_file = ROOT / "codemod" / "rules" / "example_enable_grad.py"
    folder = FIXTURES / "example_enable_grad"
    assert not rule_file.exists() and not folder.exists()
    try:
        rule_file.write_text(RULE)
        folder.mkdir()
        (folder / "with_block.in.py").write_text(CASE)
        (folder / "with_block.out.py").write_text(CASE)  # no fix: the file stays as it is
        (folder / "with_block.findings").write_text(EXPECTED)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        run = dict(capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        spec = subprocess.run([sys.executable, "-c", CHECK], **run)
        assert spec.returncode == 0, spec.stderr
        assert json.loads(spec.stdout) == []

        model = tmp_path / "model.py"
        model.write_text(CASE)
        text = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", str(model)], **run)
        assert text.returncode == 1, text.stderr
        assert "IPF109" in text.stdout and "forced on" in text.stdout
        js = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--format", "json", str(model)], **run)
        found = json.loads(js.stdout)["findings"]
        assert [(f["code"], f["rule"]) for f in found] == [("IPF109", "example-enable-grad-hazard")], js.stdout
        doc = subprocess.run([sys.executable, "-m", "codemod", "rule", "IPF009"], **run)
        assert "## Fix safety" in doc.stdout

        diagnostics = _lsp_diagnostics(model, CASE)
        assert [d["code"] for d in diagnostics] == ["IPF109"]
        assert diagnostics[0]["range"]["start"] == {"line": 4, "character": 4}
    finally:
        rule_file.unlink(missing_ok=True)
        for p in folder.glob("*"):
            p.unlink()
        if folder.exists():
            folder.rmdir()
