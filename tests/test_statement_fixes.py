"""``fix`` builds fixes on the top-level statements they touch (``fixes.statements``): the text
is byte for byte what parsing the whole module gives, and statements are parsed alone where
that holds (else the whole module is). Real libcst, real ``ast``, both ways in one process."""

from __future__ import annotations

import ast
import pathlib

import libcst
import pytest

from codemod.config import Settings
from codemod.engine import pipeline
from codemod.fixes import statements

SETTINGS = Settings(select=("ALL",), unsafe_fixes=True)
ROOT = pathlib.Path(__file__).resolve().parent.parent


def _both(text: str, monkeypatch):
    """(result by statement, result by whole module, whether the statement way was taken)."""
    data = text.encode("utf-8")
    real = statements.statement_fixes
    taken = []

    def counted(*args):
        found = real(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(statements, "statement_fixes", counted)
    each = pipeline.process_source(data, "m.py", SETTINGS, fix=True)
    monkeypatch.setattr(statements, "statement_fixes", lambda *args: None)
    whole = pipeline.process_source(data, "m.py", SETTINGS, fix=True)
    monkeypatch.setattr(statements, "statement_fixes", real)
    return each, whole, any(taken)


def _same(each, whole) -> None:
    assert each.fixed_bytes == whole.fixed_bytes
    assert [(f.code, f.span.line, f.fixable, f.fix_title) for f in each.findings] == \
        [(f.code, f.span.line, f.fixable, f.fix_title) for f in whole.findings]
    assert [(f.code, f.span.line) for f in each.applied] == [(f.code, f.span.line) for f in whole.applied]


FUNC = (
    "def f(lin: nn.Linear, x):\n"
    "    h = torch.sigmoid(x)\n"
    "    h += 1\n"
    "    lin.weight.add_(1)\n"
    "    return h\n"
)
HEAD = "import torch\nfrom torch import nn\n\n\n"


def _indent(text: str) -> str:
    """``text`` one level in; lines inside a string that spans lines are left where they are."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        out.append(line if inside or not line.strip() else "    " + line)
        inside ^= line.count('"""') % 2 == 1
    return "".join(out)


CASES = {
    # the statement way: the fixed function alone is parsed
    "plain": (HEAD + FUNC + "\n\nx = 1\n", True),
    "crlf": ((HEAD + FUNC).replace("\n", "\r\n"), True),
    "two_statements_fixed": (HEAD + FUNC + "\n\n" + FUNC.replace("def f", "def f2"), True),
    "comment_above": (HEAD + "# about f\n@staticmethod\n" + FUNC + "# after\n", True),
    "tabs": (HEAD + FUNC.replace("    ", "\t"), True),
    "non_ascii": (HEAD + "s = 'é'\n\n" + FUNC.replace("return h", "return h  # é"), True),
    # in a class: the method alone is parsed, its indentation taken off and put back
    "method": (HEAD + 'class A(nn.Module):\n    """A."""\n\n' + _indent(FUNC) + "\n    x = 1\n", True),
    "two_methods": (HEAD + "class A(nn.Module):\n" + _indent(FUNC) + "\n" + _indent(FUNC.replace("def f", "def g")),
                    True),
    "method_with_strings": (HEAD + "class A(nn.Module):\n" + _indent(FUNC.replace(
        "    h += 1\n", '    s = """\nat column 0\n  """\n    h += 1\n    """doc\n    more"""\n')), True),
    "nested_function": (HEAD + "def outer():\n    y = 1\n\n" + _indent(FUNC) + "    return f\n", True),
    "decorated_method": (HEAD + "class A(nn.Module):\n    @torch.jit.ignore\n" + _indent(FUNC), True),
    # a line less indented than the method (a continuation): the whole module
    "method_continuation": (HEAD + "class A(nn.Module):\n" + _indent(FUNC).replace(
        "torch.sigmoid(x)", "torch.sigmoid(\nx)"), False),
    # the module's first block is indented otherwise: a new block (the with) takes its
    # indentation, which the function alone does not show: the whole module is parsed
    "other_first_indent": (HEAD + "def g(x):\n  return x\n\n\n" + FUNC, False),
    # a module-level statement (comments above it belong to it in the module's tree)
    "module_level": (HEAD + "lin = nn.Linear(2, 2)\n# about it\nlin.weight.add_(1)\n", False),
    # an import to add edits the module
    "needs_import": ("from torch import nn, ones\n\n\n" + FUNC.replace("torch.sigmoid", "ones_like"), False),
    # another encoding: libcst writes the result in it
    "latin1_cookie": ("# -*- coding: latin-1 -*-\n" + HEAD + FUNC, False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_text_as_the_whole_module(name, monkeypatch):
    text, by_statement = CASES[name]
    each, whole, taken = _both(text, monkeypatch)
    assert whole.fixed is not None  # every case has a fix to apply
    _same(each, whole)
    assert taken is by_statement


def test_a_statement_with_no_block_gets_the_module_indentation(monkeypatch):
    """A module-level line with no block, in a module indented by two: libcst would give the
    line alone four; it is parsed with the module's two."""
    text = HEAD + "def g(x):\n  return x\n\n\nx = torch.ones(2, requires_grad=True)\nh = torch.sigmoid(x); h += 1\n"
    each, whole, taken = _both(text, monkeypatch)
    assert taken and whole.fixed is not None
    _same(each, whole)


def test_a_file_libcst_cannot_parse_whole_is_fixed_where_the_statement_parses():
    """libcst's tokenizer rejects a tab-indented block under a space-indented one; the other
    functions still get their fixes, every other byte kept."""
    bad = ("class A:\n    def m(self, n):\n        for i in range(n):\n        \tif i == 0:\n        \t\tpass\n"
           "        \telse:\n\t            pass\n")
    text = HEAD + bad + "\n\n" + FUNC
    with pytest.raises(Exception):
        libcst.parse_module(text)
    result = pipeline.process_source(text.encode(), "m.py", SETTINGS, fix=True)
    assert result.error is None
    assert result.fixed.startswith(HEAD + bad + "\n\n")
    assert "h = h + 1" in result.fixed and "with torch.no_grad():" in result.fixed
    ast.parse(result.fixed)



def _in_class(func: str) -> str:
    return "class B:\n" + "".join("    " + line if line.strip() else line for line in func.splitlines(keepends=True))


def test_a_method_indented_otherwise_than_the_module_is_fixed_with_its_own_where_libcst_cannot_parse_the_module():
    """The module's first block is indented with a tab (libcst's default indent), the method
    with the hazards with spaces, and a third block mixes both so that libcst cannot parse the
    module (CPython can): the method parses alone and is fixed there, the new `with` block in
    its own spaces; every other byte is kept (the zero-restore SKConv file, bench set1/035)."""
    bad = ("class A:\n    def m(self, n):\n        for i in range(n):\n        \tif i == 0:\n        \t\tpass\n"
           "        \telse:\n\t            pass\n")
    first = "def make():\n\treturn B()\n\n\n"
    method = _in_class(FUNC)
    text = HEAD + first + bad + "\n\n" + method
    with pytest.raises(Exception):
        libcst.parse_module(text)
    result = pipeline.process_source(text.encode(), "m.py", SETTINGS, fix=True)
    assert result.error is None and result.fixed is not None
    assert result.fixed.startswith(HEAD + first + bad + "\n\n")
    tail = result.fixed[len(HEAD + first + bad + "\n\n"):]
    assert "\t" not in tail
    assert "        h = h + 1\n" in tail and "        with torch.no_grad():\n            lin.weight.add_(1)\n" in tail
    compile(result.fixed, "m.py", "exec")


def test_a_method_that_mixes_tabs_itself_gets_no_fix_where_libcst_cannot_parse_it():
    """The look-alike: the hazard sits in the block libcst refuses; nothing is rewritten."""
    bad = ("    def m(self, n, x):\n        for i in range(n):\n        \tif i == 0:\n"
           "        \t\th = torch.sigmoid(x); h += 1\n        \telse:\n\t            pass\n")
    text = HEAD + "def make():\n\treturn B()\n\n\nclass B:\n" + bad
    result = pipeline.process_source(text.encode(), "m.py", SETTINGS, fix=True)
    assert not result.changed
    assert result.error is not None and "cannot parse for fixing" in result.error.message


INDENTS = [
    "x = 1\n",
    "def f():\n  return 1\n",
    "x = (\n        1)\nif x:\n\tpass\n",
    "if x: y = 1\nelse:\n   z = 2\n",
    "s = '''\n    not code\n'''\ndef f():\n      pass\n",
    "class A:\n    # c\n  # d\n\n  x = 1\n",
    "@d\ndef f(): pass\nwhile x:\n \t y = 1\n",
]


@pytest.mark.parametrize("text", INDENTS)
def test_default_indent_is_libcsts(text):
    data = text.encode()
    assert statements.default_indent(ast.parse(data), data.splitlines(keepends=True)) == \
        libcst.parse_module(data).default_indent


def test_default_indent_is_libcsts_on_the_fixtures():
    for path in sorted((ROOT / "fixtures").rglob("*.py"))[:400]:
        data = path.read_bytes()
        try:
            tree, module = ast.parse(data), libcst.parse_module(data)
        except Exception:  # noqa: BLE001 - a fixture either parser refuses
            continue
        assert statements.default_indent(tree, data.splitlines(keepends=True)) == module.default_indent, path
