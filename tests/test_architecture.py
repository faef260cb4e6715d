"""The house's rules, enforced: one-way imports between layers (import-linter's contracts in
pyproject.toml), the analysis's parts in one order among themselves, a check that never imports
libcst or torch, no import circle anywhere, and deliberate back-edges that the contracts must
catch (so a contract itself cannot silently stop working)."""

from __future__ import annotations

import os
import shutil
import ast
import subprocess
import sys

from .conftest import ROOT

LINT_IMPORTS = os.path.join(os.path.dirname(sys.executable), "lint-imports")


def lint_imports(root) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_layer_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_back_edge_breaks_the_layer_contract(tmp_path):
    """A module of the analysis that imports a rule, even inside a function, is caught."""
    shutil.copytree(ROOT / "codemod", tmp_path / "codemod", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "codemod" / "analysis" / "back_edge.py").write_text(
        "def rules():\n    from codemod.rules import registry\n\n    return registry.rules()\n"
    )
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "codemod.analysis is not allowed to import codemod.rules" in result.stdout
    assert "codemod.analysis.back_edge -> codemod.rules.registry" in result.stdout


def copy_of_the_package(tmp_path):
    shutil.copytree(ROOT / "codemod", tmp_path / "codemod", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path / "codemod" / "analysis"


def test_a_lower_analysis_part_importing_a_higher_one_breaks_the_order(tmp_path):
    """The analysis's parts are layered (pyproject.toml: "The analysis is ordered"): a part that
    imports one above it, inside a function or only for type checking, is caught."""
    analysis = copy_of_the_package(tmp_path)
    with open(analysis / "tensor_kind.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef _model():\n    from codemod.analysis.model import SemanticModel\n\n    return SemanticModel\n")
    with open(analysis / "dtype.py", "a", encoding="utf-8") as f:
        f.write("\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                "    from codemod.analysis.summaries import Summaries\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "codemod.analysis.tensor_kind is not allowed to import codemod.analysis.model" in result.stdout
    assert "codemod.analysis.dtype is not allowed to import codemod.analysis.summaries" in result.stdout


def test_a_new_analysis_part_must_be_given_its_place(tmp_path):
    """The order is exhaustive: a module of the analysis that the contract does not place fails."""
    analysis = copy_of_the_package(tmp_path)
    (analysis / "new_part.py").write_text("from codemod.analysis.syntax import target_key\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "codemod.analysis.new_part" in result.stdout and "not listed as layers" in result.stdout


def test_mypy_types_the_analysis_and_the_fixes():
    """The analysis and the fixes pass mypy with the project's settings ([tool.mypy] in
    pyproject.toml: every function annotated, no bare containers, no implicit Optional).
    mypy keeps its cache in .mypy_cache (which it tells git to ignore): about 1 s warm, 10 cold."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "mypy", "codemod/analysis", "codemod/fixes"], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def module_imports(package) -> dict:
    """Each module of ``package`` and the package's modules it imports, function-level imports
    included; ``from pkg import mod`` is an edge to ``pkg.mod`` (not to ``pkg``'s ``__init__``)."""
    import ast

    paths = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    edges = {}
    for name, path in paths.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                subs = [f"{base}.{a.name}" for a in node.names]
                found.update(subs if all(s in paths for s in subs) else [base, *subs])
        edges[name] = {m for m in found if m in paths and m != name}
    return edges


def import_cycles(edges: dict) -> list:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return groups


def test_no_import_circle():
    """No import circle anywhere in codemod/ (function-level and ``if TYPE_CHECKING:`` imports
    included): the last ones, the analysis's, went with issue 27."""
    circles = [" <-> ".join(group) for group in import_cycles(module_imports(ROOT / "codemod"))]
    assert not circles, f"import circles: {circles}"


def test_the_circle_finder_sees_a_function_level_circle(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def f():\n    from . import a\n")
    (package / "c.py").write_text("from pkg import a\n")
    assert import_cycles(module_imports(package)) == [["pkg.a", "pkg.b"]]


MAX_CLASS_LINES = 300  # a class longer than this is several facts in one: split it (issue 27)


def long_classes(package) -> dict:
    """Every class (nested ones included) in the package longer than MAX_CLASS_LINES, with its length."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - start + 1
                if length > MAX_CLASS_LINES:
                    found[f"{module}.{node.name}"] = length
    return found


def test_no_class_over_300_lines():
    found = long_classes(ROOT / "codemod")
    assert not found, f"classes over {MAX_CLASS_LINES} lines (split them along what they compute): {found}"


def test_the_class_length_finder_sees_a_long_nested_class(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    body = "".join(f"        x{i} = {i}\n" for i in range(MAX_CLASS_LINES))
    (package / "a.py").write_text("def f():\n    class Long:\n" + body + "class Short:\n    pass\n")
    assert long_classes(package) == {"pkg.a.Long": MAX_CLASS_LINES + 1}
