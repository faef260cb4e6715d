"""The structural facts of one module, as the parts above ``dataflow`` ask them of the model.

The analysis is ordered (docs/architecture.md): each part imports only parts below it, and the
``SemanticModel`` at the top wires them. A part above these asks its questions through the model
(``model.owner(node)``, ``model.reaching(flow, key, stmt)``) without importing it: it declares
what it reads as a ``Protocol``: this one, extended where a part reads more
(``tensor_kind.KindFacts``, ``requires_grad.RequiresGradFacts``, ``summaries.SummaryFacts``,
``hazard.HazardFacts``), each extension naming only facts that parts below it compute. The model satisfies them all (mypy
checks it where the model hands itself to the hazard analysis and the summaries).

Every question here is answered by a part below this module: ``tree`` (where a node sits),
``binder`` (a body's flow of bindings), ``names`` (imports), ``classes`` (``self.<attr>``,
calls by callee) and ``dataflow`` (reaching bindings, aliases).
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Protocol, Set

from codemod.analysis.binder import Binding, Flow
from codemod.analysis.classes import AttrValue, Calls as CallTable
from codemod.analysis.dataflow import Aliases
from codemod.analysis.project import ProjectIndex
from codemod.analysis.source import Source
from codemod.analysis.syntax import Located, Owner, Pos, Span


class Facts(Protocol):
    """Where a node sits, what reaches it, what a name refers to (``SemanticModel`` offers each
    as its own method, bound to the part that computes it)."""

    @property
    def module(self) -> ast.Module: ...

    @property
    def source(self) -> Source: ...

    # the project index (``analysis.project``: plain data of the run's other files), if any, and
    # this module's name in it
    @property
    def project(self) -> Optional[ProjectIndex]: ...

    @property
    def module_name(self) -> str: ...

    # tree
    def parent(self, node: ast.AST) -> Optional[ast.AST]: ...

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]: ...

    def walk(self, node: ast.AST) -> Iterator[ast.AST]: ...

    def statement_of(self, node: Located) -> Located: ...

    def owner(self, node: ast.AST) -> Owner: ...

    def enclosing_class(self, node: ast.AST) -> Optional[ast.ClassDef]: ...

    def range(self, node: Located) -> Span: ...

    def code(self, node: Located) -> str: ...

    # binder
    def flow(self, owner: Owner, nested: bool = True) -> Flow: ...

    # dataflow
    def reaching(self, flow: Flow, key: str, stmt: Located) -> List[Binding]: ...

    def aliases(self, flow: Flow, key: str, at: Pos) -> Aliases: ...

    # names
    def qualified_names(self, node: ast.AST) -> Set[str]: ...

    def torch_name(self, node: ast.AST) -> Optional[str]: ...

    # classes
    def class_attrs(self, cls: ast.ClassDef) -> Dict[str, List[AttrValue]]: ...

    def class_buffers(self, cls: ast.ClassDef) -> Set[str]: ...

    def calls_in(self, scope: ast.AST) -> CallTable: ...

    def attribute_writes(self, attr: str) -> List[ast.expr]: ...

    def mentions(self, word: str) -> List[ast.expr]: ...

    def static_function(self, func: ast.expr) -> Optional[ast.FunctionDef]: ...


def head_name(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def project_name(model: Facts, node: ast.expr) -> Optional[str]:
    """The qualified name of the run's class or module that ``node`` (``Base``, ``mod.Base``)
    names through the one import of its head at the module's top (``ProjectIndex.imported``),
    where no function binds the head; None otherwise."""
    index, head = model.project, head_name(node)
    if index is None or not head:
        return None
    if any(isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)) and head in model.flow(a).bindings for a in model.ancestors(node)):
        return None
    bound = model.flow(model.module, nested=False).bindings.get(head, [])
    if len(bound) != 1 or not isinstance(bound[0].stmt, (ast.Import, ast.ImportFrom)):
        return None
    target = index.imported(model.module_name, head)
    if target is None:
        return None
    rest: List[str] = []
    while isinstance(node, ast.Attribute):
        rest.insert(0, node.attr)
        node = node.value
    return ".".join([target, *rest])

