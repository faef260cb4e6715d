"""diff-nurbs 0.0.3 (diff_nurbs/nurbs.py): the fifteen proven findings of `inplacefix check` (stop 55, fresh55, end of
stop), in the B-spline basis recursions `get_basis` (:109, :110, :114, :116), `calc_basis_derivs` (:246, :247, :250,
:252, :254, :266, :272, :283, :289) and `calc_bspline_derivs_surface` (:862, :864). Each writes a slice of a buffer
(`left`, `right`, `basis_values`, `ndu`, `a`, `tmp`) that a product or quotient of an earlier step saved (same
iteration or the previous one). diff-nurbs is "an automatically differentiable pure-Python NURBS implementation":
evaluation points (or knots) that require grad make backward of the basis values raise; nothing in the package
differentiates those (control points that require grad alone do not raise): real by this file's convention (an input
that requires grad). The functions are compiled alone from the shipped file (with `find_span`; the module imports
matplotlib, not needed here). Each line is isolated by rewriting every other slice write of the compiled functions
in a fresh-copy form (the value computed first, then `x = x.clone(); x[...] = value`: the write then spoils no
earlier save); its control writes it in that form too. Where the saver read the buffer that an earlier write kept
one tensor (:116, :254, :864), the other writes of that buffer go through `.data` instead. :250 (`ndu[:, j, r] =
...`) cannot be isolated: it spoils the quotient's (:251) saves of ndu only while :252/:254 write ndu in place, and
with those through .data the quotient no longer reaches the result; it is real only in this file's "not isolated"
sense (as torch-world :157).
"""

import _shim  # noqa: F401
import ast
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("diff_nurbs/nurbs.py")
FUNCS = ["find_span", "get_basis", "calc_basis_derivs", "calc_bspline_derivs_surface"]
LINES = {"get_basis": (109, 110, 114, 116), "calc_basis_derivs": (246, 247, 250, 252, 254, 266, 272, 283, 289),
         "calc_bspline_derivs_surface": (862, 864)}
TEXT = open(PATH).read()
TREE = ast.parse(TEXT)


DATA = {}  # line: (name, the same write through name.data: same tensor, no version bump)
OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def slice_writes():
    """{line: clone-form code} for every `name[...] = ...` / `name[...] op= ...` in the compiled functions."""
    out = {}
    for node in TREE.body:
        if isinstance(node, ast.FunctionDef) and node.name in FUNCS:
            for st in ast.walk(node):
                target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else \
                    st.target if isinstance(st, ast.AugAssign) else None
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    name = target.value.id
                    tgt = ast.get_source_segment(TEXT, target)
                    rhs = ast.get_source_segment(TEXT, st.value)
                    value = f"{tgt} {OPS[type(st.op)]} ({rhs})" if isinstance(st, ast.AugAssign) else f"({rhs})"
                    out[st.lineno] = f"_fresh = {value}\n{name} = {name}.clone()\n{tgt} = _fresh"
                    DATA[st.lineno] = (name, f"_fresh = {value}\n{name}.data{tgt[len(name):]} = _fresh")
    return out


WRITES = slice_writes()
for func, lines in LINES.items():
    for n in lines:
        assert n in WRITES, n


def run(func, shipped=(), control=False, grad="points", same_data=False):
    replace = {n: code for n, code in WRITES.items() if n not in shipped or control}
    if same_data:  # the other writes of the same buffer through .data (they keep it one tensor)
        names = {DATA[n][0] for n in shipped}
        for n, (name, code) in DATA.items():
            if name in names and n not in shipped:
                replace[n] = code
    ns = compile_alone(PATH, set(FUNCS), {"torch": torch, "th": torch}, replace=replace)

    def go():
        degree = 3
        knots = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.3, 0.6, 1.0, 1.0, 1.0, 1.0])
        n_ctrl = len(knots) - degree - 1
        if grad == "knots":
            knots.requires_grad_()
        pts = torch.tensor([0.1, 0.35, 0.5, 0.8], requires_grad=grad == "points")
        if func == "calc_bspline_derivs_surface":
            ctrl = torch.randn(n_ctrl, n_ctrl, 3, requires_grad=grad == "control")
            out = ns[func](pts, pts.flip(0), degree, degree, ctrl, knots, knots, 2)
        else:
            span = ns["find_span"](pts.detach(), degree, n_ctrl, knots.detach())
            args = (pts, span, degree, knots) + ((2,) if func == "calc_basis_derivs" else ())
            out = ns[func](*args)
        out.square().sum().backward()
    return go


SAME_DATA = {116, 254, 864}  # writes whose saver read the same buffer in an earlier write's wake
for func, lines in LINES.items():
    for n in lines:
        FID = f"diff_nurbs/nurbs.py:{n}:IPF104"
        if n == 250:  # not isolated
            attempt(FID, "path", "calc_basis_derivs as shipped, evaluation points that require grad: raises",
                    run(func, tuple(WRITES)))
            attempt(FID, "context", ":250 as shipped, the other writes in fresh-copy form: runs", run(func, (n,)))
            attempt(FID, "context", ":250 as shipped, the other ndu writes through .data: runs (the quotient that "
                    "saved ndu then reaches the result only through :252/:254)", run(func, (n,), same_data=True))
        elif n in SAME_DATA:
            attempt(FID, "path", f"{func}, degree 3, four evaluation points that require grad, :{n} as shipped, the "
                    "other writes of its buffer through .data and the other slice writes in fresh-copy form, backward "
                    "of the result: raises", run(func, (n,), same_data=True))
            attempt(FID, "control", f"the same with :{n} in fresh-copy form too: runs",
                    run(func, (n,), control=True, same_data=True))
            attempt(FID, "context", "with every other write in fresh-copy form, its buffer is a fresh copy that "
                    "nothing saved when it writes: runs", run(func, (n,)))
        else:
            attempt(FID, "path", f"{func}, degree 3, four evaluation points that require grad, :{n} as shipped and "
                    "the other slice writes in fresh-copy form, backward of the result: raises", run(func, (n,)))
            attempt(FID, "control", f"the same with :{n} in fresh-copy form too: runs", run(func, (n,), control=True))
attempt("diff_nurbs/nurbs.py:109:IPF104", "context", "get_basis as shipped, knots that require grad: raises",
        run("get_basis", shipped=tuple(WRITES), grad="knots"))
attempt("diff_nurbs/nurbs.py:862:IPF104", "context", "calc_bspline_derivs_surface as shipped, control points that "
        "require grad (evaluation points and knots without): runs", run("calc_bspline_derivs_surface",
                                                                        shipped=tuple(WRITES), grad="control"))
