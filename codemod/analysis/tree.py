"""Navigation in one module's ``ast``: parents, ancestors, the statement, function or class
around a node, and the blocks (statement lists) that hold it."""

from __future__ import annotations

import ast
import weakref
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Type, cast

from codemod.analysis.source import WALKED_GROUPS, Source
from codemod.analysis.syntax import (
    BODIES,
    OWNERS,
    Block,
    Located,
    Owner,
    Span,
    span,
)

_GROUP_OF = {t: group for group in WALKED_GROUPS for t in group}


class Tree:
    """Where a node sits; the answers asked for often are remembered (one cache each)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.module = source.tree
        self._parents = source.parents
        self._owners: Dict[ast.AST, Owner] = {}
        self._blocks_around: Dict[ast.AST, Set[Block]] = {}
        self._block_of: Dict[ast.AST, Optional[Block]] = {}
        self._fields_of: Dict[ast.AST, Dict[int, Block]] = {}  # parent -> {id(statement): block}
        self._returns: Optional[Dict[ast.AST, List[ast.Return]]] = None  # function -> its own returns
        self._defined: Optional[Dict[ast.AST, List[ast.AST]]] = None  # owner -> the functions defined in it
        # what ``calls`` reads off the syntax alone, once per tree (a module's index pass and its
        # file pass share the tree): how the module names ``torch.nn.Module``, and per top-level
        # class whether constructing it surely runs its ``__init__``
        self.module_class_names: Optional[FrozenSet[str]] = None
        self.plain_constructions: Dict[ast.AST, bool] = {}

    def _block_field(self, parent: ast.AST, child: ast.AST) -> Optional[Block]:
        """(parent, field) when ``child`` is a statement directly in one of ``parent``'s blocks.
        Each parent's statements are indexed once: a scan of a module's body per question made
        the analysis quadratic in the module's statements."""
        if not isinstance(child, (ast.stmt, ast.ExceptHandler)):
            return None
        fields = self._fields_of.get(parent)
        if fields is None:
            fields = {}
            for field in BODIES:
                stmts = getattr(parent, field, None)
                if isinstance(stmts, list):
                    for stmt in stmts:
                        fields.setdefault(id(stmt), (id(parent), field))
            self._fields_of[parent] = fields
        return fields.get(id(child))

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self._parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        up = self._parents.get(node)
        while up is not None:
            yield up
            up = self._parents.get(up)

    @staticmethod
    def range(node: Located) -> Span:
        """((line, column), (end line, end column)); columns in UTF-8 bytes, as ast counts."""
        return span(node)

    def code(self, node: Located) -> str:
        """Source text of a node, on one line, for messages."""
        return self.source.snippet(node)

    def walk(self, node: ast.AST) -> Iterator[ast.AST]:
        """``node`` and everything below it (``ast.walk``, quicker on the indexed tree)."""
        kids = self.source.children
        todo = [node]
        while todo:
            node = todo.pop()
            yield node
            todo.extend(kids[node])

    def nodes(self, node_type: Type[ast.AST]) -> List[ast.AST]:
        """The module's nodes of ``node_type`` (one of ``source.WALKED_GROUPS``' types), in
        :meth:`walk`'s order from the module: what ``[n for n in walk(module) if isinstance(n,
        node_type)]`` gives, from the lists the source's one walk filed (not to be changed)."""
        listed = self.source.walked(node_type)
        if len(_GROUP_OF[node_type]) == 1:
            return listed
        return [n for n in listed if n.__class__ is node_type]

    def returns(self, func: ast.AST) -> List[ast.Return]:
        """The ``return`` statements of ``func`` itself (not of functions nested in it), in
        :meth:`walk`'s order from ``func``: filed for every function from the module's list of
        returns, once (a walk of the module meets a function's nodes together, in the order a
        walk from the function does). Not to be changed."""
        if self._returns is None:
            self._returns = {}
            for node in self.source.walked(ast.Return):
                self._returns.setdefault(self.owner(node), []).append(cast(ast.Return, node))
        return self._returns.get(func, [])

    def defined_in(self, owner: ast.AST) -> List[ast.AST]:
        """The functions (``def``, ``async def``) whose owner (:meth:`owner`) is ``owner``, in
        :meth:`walk`'s order from it. Not to be changed."""
        if self._defined is None:
            self._defined = {}
            for node in self.source.walked(ast.FunctionDef):
                self._defined.setdefault(self.owner(node), []).append(node)
        return self._defined.get(owner, [])

    def statement_of(self, node: Located) -> Located:
        """The statement (or compound statement) that contains ``node`` (``node`` itself when
        no statement does)."""
        cur: Optional[ast.AST] = node
        while cur is not None and not isinstance(cur, ast.stmt):
            cur = self._parents.get(cur)
        return cur or node

    def owner(self, node: ast.AST) -> Owner:
        """The function whose body holds ``node``, or the module (remembered along the way up:
        every name lookup asks)."""
        owners, parents = self._owners, self._parents
        path: List[ast.AST] = []
        cur = parents.get(node)
        found: Owner = self.module
        while cur is not None:
            if isinstance(cur, OWNERS):
                found = cur
                break
            known = owners.get(cur)
            if known is not None:
                found = known
                break
            path.append(cur)
            cur = parents.get(cur)
        for p in path:
            owners[p] = found
        return found

    def enclosing_class(self, node: ast.AST) -> Optional[ast.ClassDef]:
        parents, ClassDef = self._parents, ast.ClassDef  # (a loop up: asked of every call resolved)
        up = parents.get(node)
        while up is not None:
            if isinstance(up, ClassDef):
                return up
            up = parents.get(up)
        return None

    def blocks_around(self, node: ast.AST) -> Set[Block]:
        """The statement lists (blocks) that hold ``node`` at any depth."""
        out = self._blocks_around.get(node)
        if out is None:
            out, child = set(), node
            for anc in self.ancestors(node):
                block = self._block_field(anc, child)
                if block is not None:
                    out.add(block)
                child = anc
            self._blocks_around[node] = out
        return out

    def block_of(self, node: ast.AST) -> Optional[Block]:
        if node not in self._block_of:
            child, found = node, None
            for anc in self.ancestors(node):
                found = self._block_field(anc, child)
                if found is not None:
                    break
                child = anc
            self._block_of[node] = found
        return self._block_of[node]


# tree -> :func:`bound_in_function_bodies`, once per tree (a module's index pass and its file pass
# share the tree): a name outside it is no local of any function, whose bindings need not be
# gathered to say so (``Calls._resolve``, ``Names.bound_in_functions``).
_FUNCTION_NAMES: "weakref.WeakKeyDictionary[Tree, FrozenSet[str]]" = weakref.WeakKeyDictionary()


def function_names(tree: Tree) -> FrozenSet[str]:
    found = _FUNCTION_NAMES.get(tree)
    if found is None:
        found = _FUNCTION_NAMES[tree] = bound_in_function_bodies(tree)
    return found


def bound_in_function_bodies(tree: Tree) -> FrozenSet[str]:
    """Every plain name some function of the module may bind in its own body: a superset of the
    keys without a dot of each function's ``Binder.flow`` bindings (stored names, parameters,
    the names of functions and classes defined below the module's top level, handlers' and
    patterns' names, and what imports bind outside the module's top level), read off the lists
    the source's one walk filed. The names of the module's own top-level functions and classes
    are left out: they bind in the module."""
    source, module = tree.source, tree.module
    parents = source.parents
    Name, Store = ast.Name, ast.Store  # (by class: a parsed tree's nodes are of these classes)
    bound = {n.id for n in source.walked(ast.Name) if n.__class__ is Name and n.ctx.__class__ is Store}
    for node in source.walked(ast.FunctionDef):  # (and async ones)
        func = cast(ast.FunctionDef, node)
        args = func.args
        bound.update(a.arg for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg)
                     if a is not None)
        if parents.get(node) is not module:
            bound.add(func.name)
    bound.update(cast(ast.ClassDef, node).name for node in source.walked(ast.ClassDef) if parents.get(node) is not module)
    for node in source.walked(ast.ExceptHandler):  # (with the patterns that bind)
        named = getattr(node, "rest" if isinstance(node, ast.MatchMapping) else "name", None)
        if named:
            bound.add(named)
    for node in source.walked(ast.Import):  # (and ``from`` imports)
        if tree.owner(node) is not module:
            bound.update(a.asname or a.name.split(".")[0] for a in cast(ast.Import, node).names)
    return frozenset(bound)
