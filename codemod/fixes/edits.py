"""Edit helpers for building fixes on libcst's tree, in one place (libcst only, no analysis).

Expressions: :func:`rebind` (``a = b = value``), :func:`right_operand` (parentheses only where
precedence needs them), :func:`clone_of` (``d = d.clone()``), :func:`out_of_place_chain`
(``x.mul_(a).add_(b)`` -> ``x.mul(a).add(b)``). Statements: :func:`insert_before` (into a line
or suite), :func:`wrap_in_with` (a run of statements of a block into ``with <expr>:``,
re-indented, comments kept), :func:`copy_leaf` (``c2 = c.clone()`` and the later uses on
``c2``), :func:`detach_bindings` (``row = h[0]`` -> ``row = h[0].detach()``). Modules:
:func:`ensure_import` (``import torch`` once, where imports go). Text: :func:`code`,
:func:`fix_title`. Fresh names come from the analysis (``SemanticModel.fresh_name``): they
depend on every name in the file.
"""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Iterable,
    List,
    Literal,
    Optional,
    Protocol,
    Sequence,
    Set,
    Tuple,
    TypeGuard,
    Union,
    cast,
)

from codemod import torch_api
from codemod.fixes import _cst as cst
from codemod.fixes.site import Block, Line

if TYPE_CHECKING:
    from libcst import SimpleWhitespace


class _Spaced(Protocol):
    """An ``op=`` with the whitespace around it: every libcst augmented-assignment operator has
    it (``BaseAugOp`` does not declare it), and a statement's is never parenthesized."""

    whitespace_before: SimpleWhitespace
    whitespace_after: SimpleWhitespace


def code(node: cst.CSTNode) -> str:
    """Source text of a libcst node."""
    return cst.Module([]).code_for_node(node)


def rebind(
    targets: Iterable[cst.BaseAssignTargetExpression],
    value: cst.BaseExpression,
    also: Iterable[str] = (),
    like: Optional[cst.BaseSmallStatement] = None,
) -> cst.Assign:
    """``a = b = value``: bind every target (and the alias keys in ``also``) to ``value``.

    ``like`` lends its spacing around ``=`` (from an ``op=``) and its semicolon.
    """
    before: SimpleWhitespace = cst.SimpleWhitespace(" ")
    after = before
    semicolon: Union[cst.Semicolon, cst.MaybeSentinel] = cst.MaybeSentinel.DEFAULT
    if isinstance(like, cst.AugAssign):
        operator = cast(_Spaced, like.operator)
        before, after = operator.whitespace_before, operator.whitespace_after
    if like is not None:
        semicolon = like.semicolon
    names = list(targets) + [_key_target(key) for key in also]
    return cst.Assign(
        targets=[
            cst.AssignTarget(t, whitespace_before_equal=before, whitespace_after_equal=after)
            for t in names
        ],
        value=value,
        semicolon=semicolon,
    )


def _key_target(key: str) -> "cst.BaseAssignTargetExpression":
    """``self.h.w`` as an assignment target (a key parses to a Name or an Attribute)."""
    return cast("cst.BaseAssignTargetExpression", cst.parse_expression(key))


def fix_title(node: cst.CSTNode, verb: str = "Rewrite as") -> str:
    """A one-line title: the first line of the new code (editors show it in a menu)."""
    lines = code(node).strip().splitlines()
    return f"{verb} `{lines[0]}{' …' if len(lines) > 1 else ''}`"


# Python's binding strength, low to high (https://docs.python.org/3/reference/expressions.html).
_BINARY_PRECEDENCE = {
    "BitOr": 6, "BitXor": 7, "BitAnd": 8, "LeftShift": 9, "RightShift": 9, "Add": 10,
    "Subtract": 10, "Multiply": 11, "MatrixMultiply": 11, "Divide": 11, "FloorDivide": 11,
    "Modulo": 11, "Power": 13,
}


def precedence(expr: cst.BaseExpression) -> int:
    if expr.lpar:
        return 100
    if isinstance(expr, cst.BinaryOperation):
        return _BINARY_PRECEDENCE[type(expr.operator).__name__]
    if isinstance(expr, cst.UnaryOperation):
        return 4 if isinstance(expr.operator, cst.Not) else 12
    if isinstance(expr, cst.Comparison):
        return 5
    if isinstance(expr, cst.BooleanOperation):
        return 3 if isinstance(expr.operator, cst.And) else 2
    if isinstance(expr, cst.IfExp):
        return 1
    if isinstance(expr, (cst.Lambda, cst.NamedExpr, cst.Yield)):
        return 0
    if isinstance(expr, cst.Await):
        return 14
    return 100  # atoms, calls, subscripts, attributes


def right_operand(op: "type[cst.BaseBinaryOp]", value: cst.BaseExpression) -> cst.BaseExpression:
    """``value`` as the right operand of ``op``, parenthesised only where it must be.

    Equal precedence gets parentheses too (``x -= a - b`` -> ``x - (a - b)``), except for the
    right-associative ``**``; a unary operand of ``**`` needs none (``x ** -y``).
    """
    mine, theirs = _BINARY_PRECEDENCE[op.__name__], precedence(value)
    if op is cst.Power and (theirs >= mine or isinstance(value, cst.UnaryOperation)):
        return value
    if theirs > mine:
        return value
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def insert_before(
    container: Line, index: int, clone: cst.BaseSmallStatement, temp: Optional[str] = None
) -> Union[Line, "cst.FlattenSentinel[cst.SimpleStatementLine]"]:
    """Put ``clone`` before the small statement at ``index`` of a line or suite (libcst).

    With ``temp``, the statement's value is first computed into ``temp``:
    ``tmp = value; d = d.clone(); d[i] = tmp``. Before the first statement of a line, the new
    statements get lines of their own above it, the first taking the blank lines there;
    comments stay with the statement they describe.
    """
    body = list(container.body)
    new: List[cst.BaseSmallStatement] = []
    if temp is not None:
        # A statement with a value to compute first: an assignment or augmented assignment.
        stmt = cast("Union[cst.Assign, cst.AugAssign]", body[index])
        new.append(cst.Assign(targets=[cst.AssignTarget(cst.Name(temp))], value=stmt.value))
        body[index] = stmt.with_changes(value=cst.Name(temp))
    new.append(clone)
    if isinstance(container, cst.SimpleStatementLine) and index == 0:
        leading = list(container.leading_lines)
        blanks = max((i + 1 for i, line in enumerate(leading) if line.comment is None), default=0)
        lines = [cst.SimpleStatementLine([s]) for s in new]
        lines[0] = lines[0].with_changes(leading_lines=leading[:blanks])
        return cst.FlattenSentinel([
            *lines, container.with_changes(body=body, leading_lines=leading[blanks:]),
        ])
    semicolon = cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
    body[index:index] = [s.with_changes(semicolon=semicolon) for s in new]
    return container.with_changes(body=body)


def is_inplace_method_cst_call(node: cst.BaseExpression) -> TypeGuard[cst.Call]:
    """``x.add_(...)``: a call of an in-place tensor method (its ``func`` an Attribute)."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in torch_api.INPLACE_METHODS
    )


def out_of_place_chain(call: cst.Call) -> cst.BaseExpression:
    """``x.mul_(a).add_(b)`` -> ``x.mul(a).add(b)`` (on libcst's tree)."""
    links: List[cst.Call] = []
    base: cst.BaseExpression = call
    while is_inplace_method_cst_call(base):
        links.append(base)
        base = cast("cst.Attribute", base.func).value  # the guard checked it
    expr = base
    for link in reversed(links):
        func = cast("cst.Attribute", link.func)
        # Rules offer this fix only where every method of the chain has a twin (inplace_method).
        twin = cast(str, torch_api.INPLACE_METHODS[func.attr.value])
        expr = link.with_changes(func=func.with_changes(value=expr, attr=cst.Name(twin)))
    return expr


def clone_of(key: str, also: Iterable[str] = ()) -> "cst.Assign":
    """``d = d.clone()`` (and ``d = e = d.clone()`` with the aliases in ``also``)."""
    return rebind(
        [_key_target(key)],
        cst.Call(func=cst.Attribute(value=cst.parse_expression(key), attr=cst.Name("clone"))),
        also,
    )


def wrap_in_with(block: Block, start: int, end: int, context: str) -> Block:
    """``block`` with its statements ``start`` to ``end`` (exclusive) moved into
    ``with <context>:``, which takes their place.

    libcst indents the new body from the block around it, so the moved statements keep their
    own inner layout; the blank lines and comments above the first of them stay above the
    ``with`` (they describe the run), comments between them move with them.
    """
    body = list(block.body)
    if not 0 <= start < end <= len(body):
        raise ValueError(f"no statements {start}:{end} in a block of {len(body)}")
    first = body[start]
    leading = list(getattr(first, "leading_lines", ()))
    moved = [first.with_changes(leading_lines=[])] + body[start + 1:end]
    wrapped = cst.With(
        items=[cst.WithItem(cst.parse_expression(context))],
        body=cst.IndentedBlock(body=moved),
        leading_lines=leading,
    )
    body[start:end] = [wrapped]
    return block.with_changes(body=body)


def wrap_run_in_with(block: Block, run: Sequence["cst.BaseStatement"], context: str, near: int = 0) -> Block:
    """``block`` with the statements ``run`` (as they were parsed) wrapped in ``with <context>:``.

    The run is found by equality, not by index: fixes applied inside the block before this one
    (a clone inserted above) may have moved it; its own statements are left alone by the other
    rules, so they are as parsed. Where the same statements appear more than once
    (``b.zero_()`` twice), the match nearest ``near``, where the run was parsed, is the one."""
    body = list(block.body)
    found = [start for start in range(len(body) - len(run) + 1)
             if all(body[start + k].deep_equals(stmt) for k, stmt in enumerate(run))]
    if not found:
        raise ValueError("the statements to wrap are no longer in their block")
    start = min(found, key=lambda s: (abs(s - near), s < near))
    return wrap_in_with(block, start, start + len(run), context)


def join_with_before(block: Block, stmt: "cst.BaseStatement", near: int = 0) -> Block:
    """``block`` with ``stmt`` (as it was parsed) moved to the end of the ``with`` statement right
    before it: a second write joins the ``with torch.no_grad():`` the first one got, instead of
    a block of its own. Blank lines and comments above ``stmt`` move with it."""
    body = list(block.body)
    found = [i for i in range(1, len(body)) if body[i].deep_equals(stmt) and isinstance(body[i - 1], cst.With)]
    if not found:
        raise ValueError("the statement to join is no longer after a `with`")
    index = min(found, key=lambda i: (abs(i - near), i < near))
    before = body[index - 1]
    assert isinstance(before, cst.With)
    inner = before.body
    if not isinstance(inner, cst.IndentedBlock):
        raise ValueError("the `with` before the statement has no indented body")
    joined = before.with_changes(body=inner.with_changes(body=[*inner.body, stmt]))
    body[index - 1:index + 1] = [joined]
    return block.with_changes(body=body)


def has_import(module: "cst.Module", name: str) -> bool:
    """Whether ``module`` has a top-level ``import <name>`` that binds ``name`` itself."""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import) and any(
                    a.asname is None and _dotted(a.name) == name for a in small.names
                ):
                    return True
    return False


def ensure_import(module: "cst.Module", name: str = "torch") -> "cst.Module":
    """``module`` with ``import <name>`` added once, after the docstring, ``__future__``
    imports and the other top-level imports at the head of the file (libcst's
    ``AddImportsVisitor`` does the placing); unchanged where it is imported already."""
    if has_import(module, name):
        return module
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, ImportItem

    context = CodemodContext()
    return AddImportsVisitor(context, [ImportItem(name)]).transform_module(module)


def _dotted(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return f"{_dotted(expr.value)}.{expr.attr.value}"
    return ""


def detach_bindings(node: "cst.CSTNode", wanted: Set[Tuple[str, str]]) -> "cst.CSTNode":
    """``node`` with each binding ``name = value`` that ``wanted`` names, as ``(name,
    ast.dump(value))`` (the analysis decides which, on its own tree), bound to ``value.detach()``."""
    import ast

    import libcst

    class Detach(libcst.CSTTransformer):
        def leave_Assign(self, original: "cst.Assign", updated: "cst.Assign") -> "cst.Assign":
            targets = updated.targets
            if len(targets) != 1 or not isinstance(targets[0].target, libcst.Name):
                return updated
            value = ast.parse(code(original.value).strip(), mode="eval").body
            if (targets[0].target.value, ast.dump(value)) not in wanted:
                return updated
            return updated.with_changes(value=libcst.Call(libcst.Attribute(updated.value, libcst.Name("detach"))))

    return cast("cst.CSTNode", node.visit(Detach()))


CopyForm = Literal["twin", "operator", "clone"]


def clone_after(block: Block, at: int, name: str) -> Block:
    """``block`` with ``name = name.clone()`` inserted right after its statement ``at`` (which
    binds ``name``): the later code works on a copy of what that statement made (IPF005's fix of a
    start value made with ``requires_grad=True``, whose own gradient nothing observes)."""
    body = list(block.body)
    if not 0 <= at < len(body):
        raise ValueError(f"no statement {at} in a block of {len(body)}")
    clone = cst.parse_statement(f"{name} = {name}.clone()\n")
    return block.with_changes(body=body[:at + 1] + [clone] + body[at + 1:])


def copy_leaf(block: Block, at: int, name: str, copy: str, renamed: Sequence[bool],
              form: CopyForm = "clone") -> Block:
    """``block`` with the update at its statement ``at`` made on a copy of the variable ``name``,
    and the uses of ``name`` from there on renamed to ``copy`` where ``renamed`` says so (one
    flag per use, in source order: the analysis decides which, on its own tree). The "update a
    copy" fix of a leaf that requires grad (IPF005), by ``form``: ``twin``, the statement
    ``c.index_copy_(...)`` becomes ``c2 = c.index_copy(...)``; ``operator``, ``c += v`` becomes
    ``c2 = c + v``; ``clone``, ``c2 = c.clone()`` goes before it (``c2[i] = v``)."""
    import libcst

    class Rename(libcst.CSTTransformer):
        def __init__(self, seen: List[int]) -> None:
            super().__init__()
            self.seen = seen
            self.names_of_others: Set[int] = set()  # `x.c`, `f(c=1)`: not the variable

        def visit_Attribute(self, node: "cst.Attribute") -> None:
            self.names_of_others.add(id(node.attr))

        def visit_Arg(self, node: "cst.Arg") -> None:
            if node.keyword is not None:
                self.names_of_others.add(id(node.keyword))

        def leave_Name(self, original: "cst.Name", updated: "cst.Name") -> "cst.Name":
            if original.value != name or id(original) in self.names_of_others:
                return updated
            k = self.seen[0]
            self.seen[0] += 1
            return updated.with_changes(value=copy) if k < len(renamed) and renamed[k] else updated

    body = list(block.body)
    if not 0 <= at < len(body):
        raise ValueError(f"no statement {at} in a block of {len(body)}")
    seen = [0]
    rest = [cast("cst.BaseStatement", s.visit(Rename(seen))) for s in body[at:]]
    if seen[0] != len(renamed):
        raise ValueError(f"`{name}` is used {seen[0]} times from here, the analysis saw {len(renamed)}")
    first = rest[0]
    if form != "clone":
        line = cast("cst.SimpleStatementLine", first)
        small = line.body[0]
        value: cst.BaseExpression
        if form == "twin":
            value = out_of_place_chain(cast("cst.Call", cast("cst.Expr", small).value))
        else:
            aug = cast("cst.AugAssign", small)
            op = getattr(cst, type(aug.operator).__name__[: -len("Assign")])
            value = cst.BinaryOperation(left=aug.target, operator=op(), right=right_operand(op, aug.value))
        rest[0] = line.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(copy))], value=value)])
        return block.with_changes(body=body[:at] + rest)
    clone = cst.parse_statement(f"{copy} = {name}.clone()\n").with_changes(
        leading_lines=getattr(first, "leading_lines", ()))
    rest[0] = first.with_changes(leading_lines=[])
    return block.with_changes(body=body[:at] + [clone] + rest)
