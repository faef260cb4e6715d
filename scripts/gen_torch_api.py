"""Generate ``codemod/torch_api.py``: the facts about torch's API that the static passes need.

The passes must not import torch (editors and CI checks should not pay for it), so what they
need to know about torch is kept as plain data, produced here from the installed torch and
checked against it by ``tests/test_torch_api.py``. Run: ``python scripts/gen_torch_api.py``.
"""

from __future__ import annotations

import ast
import inspect
import pathlib
import pprint
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = pathlib.Path(__file__).resolve().parent.parent / "codemod" / "torch_api.py"

# Methods whose name ends in "_" but which do not change a tensor's values: rewriting them
# would only break code (requires_grad_ sets a flag, share_memory_ moves storage, detach_
# and the resize/set family change identity or metadata in ways no out-of-place twin keeps).
NOT_VALUE_MUTATING = {
    "requires_grad_", "share_memory_", "detach_", "set_", "resize_", "resize_as_",
    "resize_as_sparse_", "sparse_resize_", "sparse_resize_and_clear_", "as_strided_",
    "apply_", "map_", "map2_", "retain_grad_",
}

# In-place methods whose out-of-place twin always returns self's dtype (or raises), so the
# rewrite cannot promote the dtype whatever the other operands are. Checked by the test.
SAME_DTYPE_TWINS = {
    "masked_fill", "masked_scatter", "index_fill", "index_add", "index_copy", "index_put",
    "index_reduce", "scatter", "scatter_add", "scatter_reduce", "put", "lerp",
}

AUG_OPERATORS = {
    "+=": "add", "-=": "sub", "*=": "mul", "/=": "truediv", "//=": "floordiv", "%=": "mod",
    "**=": "pow", "<<=": "lshift", ">>=": "rshift", "&=": "and", "|=": "or", "^=": "xor",
    "@=": "matmul",
}


def _schema_writes_self() -> set[str]:
    """Names of aten ops whose first argument is written (``Tensor(a!) self``)."""
    names = set()
    for schema in torch._C._jit_get_all_schemas():
        args = schema.arguments
        if args and args[0].alias_info is not None and args[0].alias_info.is_write:
            names.add(schema.name.split("::", 1)[1])
    return names


def _pyi_tensor_returning(path: pathlib.Path, class_name: str | None = None) -> set[str]:
    """Functions (or methods of ``class_name``) whose every overload returns ``Tensor``."""
    tree = ast.parse(path.read_text())
    body = tree.body
    if class_name:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name).body
    returns: dict[str, set[str]] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef) and node.returns is not None:
            returns.setdefault(node.name, set()).add(ast.unparse(node.returns))
    return {n for n, r in returns.items() if r == {"Tensor"} and not n.startswith("__")}


def _inplace_param_callables() -> dict[str, int]:
    """torch callables taking ``inplace``, by qualified name, with its positional index."""
    found: dict[str, int] = {}
    for name in dir(nn):
        cls = getattr(nn, name)
        if not (inspect.isclass(cls) and issubclass(cls, nn.Module)):
            continue
        params = list(inspect.signature(cls.__init__).parameters)[1:]
        if "inplace" in params:
            index = params.index("inplace")
            found[f"torch.nn.{name}"] = index
            found[f"{cls.__module__}.{name}"] = index
    for name in dir(F):
        fn = getattr(F, name)
        if name.startswith("_") or not callable(fn):
            continue
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        if "inplace" in params:
            found[f"torch.nn.functional.{name}"] = params.index("inplace")
    return dict(sorted(found.items()))


def _modules_returning_tensor() -> list[str]:
    names = []
    for name in dir(nn):
        cls = getattr(nn, name)
        if inspect.isclass(cls) and issubclass(cls, nn.Module) and cls is not nn.Module:
            ret = inspect.signature(cls.forward).return_annotation
            if ret in (torch.Tensor, "Tensor", "torch.Tensor"):
                names.append(f"torch.nn.{name}")
                names.append(f"{cls.__module__}.{name}")
    return sorted(set(names))


def generate() -> str:
    writes = _schema_writes_self()
    torch_dir = pathlib.Path(torch.__file__).parent
    methods_returning = _pyi_tensor_returning(torch_dir / "_C" / "__init__.pyi", "TensorBase")
    functions_returning = {
        f"torch.{n}" for n in _pyi_tensor_returning(torch_dir / "_C" / "_VariableFunctions.pyi")
    } | {
        f"torch.nn.functional.{n}"
        for n in _pyi_tensor_returning(torch_dir / "nn" / "functional.pyi")
    }
    for name in dir(F):  # functional.py is annotated too; the .pyi misses some
        fn = getattr(F, name)
        if not name.startswith("_") and inspect.isfunction(fn):
            ret = inspect.signature(fn).return_annotation
            if ret in (torch.Tensor, "Tensor"):
                functions_returning.add(f"torch.nn.functional.{name}")

    inplace_methods: dict[str, str | None] = {}
    for name in sorted(dir(torch.Tensor)):
        if not name.endswith("_") or name.startswith("_") or name in NOT_VALUE_MUTATING:
            continue
        if name not in writes:
            continue
        twin = name[:-1]
        inplace_methods[name] = twin if hasattr(torch.Tensor, twin) else None

    inplace_functions: dict[str, str | None] = {}
    for prefix, namespace in (("torch", torch), ("torch.nn.functional", F)):
        for name in sorted(dir(namespace)):
            if not name.endswith("_") or name.startswith("_") or name in NOT_VALUE_MUTATING:
                continue
            if prefix == "torch" and name not in writes:
                continue
            twin = name[:-1]
            inplace_functions[f"{prefix}.{name}"] = (
                f"{prefix}.{twin}" if hasattr(namespace, twin) else None
            )

    data = {
        "TORCH_VERSION": torch.__version__.split("+")[0],
        "AUG_OPERATORS": AUG_OPERATORS,
        "TENSOR_INPLACE_DUNDERS": {
            op: hasattr(torch.Tensor, f"__i{name}__") for op, name in AUG_OPERATORS.items()
        },
        "INPLACE_METHODS": inplace_methods,
        "INPLACE_FUNCTIONS": inplace_functions,
        "NOT_VALUE_MUTATING": sorted(NOT_VALUE_MUTATING),
        "SAME_DTYPE_TWINS": sorted(SAME_DTYPE_TWINS),
        "INPLACE_PARAM_CALLABLES": _inplace_param_callables(),
        "TENSOR_METHODS": sorted(methods_returning),
        "TENSOR_FUNCTIONS": sorted(functions_returning),
        "TENSOR_MODULES": _modules_returning_tensor(),
    }
    lines = [
        '"""Facts about torch\'s API used by the static passes (generated; do not edit).',
        "",
        "Regenerate with ``python scripts/gen_torch_api.py``; ``tests/test_torch_api.py`` checks",
        "this file against the installed torch.",
        '"""',
        "",
        "# fmt: off",
    ]
    for key, value in data.items():
        if isinstance(value, list):
            value = frozenset(value)
        lines.append(f"{key} = {pprint.pformat(value, width=100, sort_dicts=True)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = generate()
    if "--check" in sys.argv:
        sys.exit(0 if OUT.read_text() == text else 1)
    OUT.write_text(text)
    print(f"wrote {OUT}")
