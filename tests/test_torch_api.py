"""``codemod/torch_api.py`` is generated from torch: check it against the installed one."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")

from codemod import torch_api  # noqa: E402

from .conftest import ROOT  # noqa: E402


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_torch_api", ROOT / "scripts" / "gen_torch_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_data_matches_installed_torch():
    generated = load_generator().generate()
    on_disk = (ROOT / "codemod" / "torch_api.py").read_text()
    if torch_api.TORCH_VERSION != torch.__version__.split("+")[0]:
        pytest.skip(f"data made from torch {torch_api.TORCH_VERSION}, installed {torch.__version__}")
    assert on_disk == generated, "run `python scripts/gen_torch_api.py` and review the diff"


def test_inplace_methods_really_write_their_receiver():
    for name in ("add_", "exp_", "masked_fill_", "clamp_", "zero_"):
        assert name in torch_api.INPLACE_METHODS
    x = torch.ones(3)
    before = x._version
    x.add_(1)
    assert x._version > before
    for name in ("requires_grad_", "share_memory_"):
        assert name not in torch_api.INPLACE_METHODS


def test_twins_exist():
    for name, twin in torch_api.INPLACE_METHODS.items():
        assert twin is None or hasattr(torch.Tensor, twin), name


@pytest.mark.parametrize("twin", sorted(torch_api.SAME_DTYPE_TWINS))
def test_same_dtype_twins_keep_self_dtype(twin):
    """The out-of-place twin returns self's dtype whatever the other operands are, or raises."""
    half = torch.zeros(4, dtype=torch.half)
    other = torch.ones(4)
    index = torch.tensor([0, 1])
    mask = torch.tensor([True, False, True, False])
    calls = {
        "masked_fill": lambda: half.masked_fill(mask, torch.tensor(2.5)),
        "masked_scatter": lambda: half.masked_scatter(mask, other),
        "index_fill": lambda: half.index_fill(0, index, torch.tensor(2.5)),
        "index_add": lambda: half.index_add(0, index, other[:2]),
        "index_copy": lambda: half.index_copy(0, index, other[:2]),
        "index_put": lambda: half.index_put((index,), other[:2]),
        "index_reduce": lambda: half.index_reduce(0, index, other[:2], "prod"),
        "scatter": lambda: half.scatter(0, index, other[:2]),
        "scatter_add": lambda: half.scatter_add(0, index, other[:2]),
        "scatter_reduce": lambda: half.scatter_reduce(0, index, other[:2], "sum"),
        "put": lambda: half.put(index, other[:2]),
        "lerp": lambda: half.lerp(other, 0.5),
    }
    try:
        result = calls[twin]()
    except RuntimeError:
        return
    assert result.dtype == torch.half


def test_inplace_param_positions():
    import inspect

    import torch.nn.functional as F

    assert torch_api.INPLACE_PARAM_CALLABLES["torch.nn.LeakyReLU"] == 1
    assert torch_api.INPLACE_PARAM_CALLABLES["torch.nn.functional.dropout"] == 3
    params = list(inspect.signature(F.relu).parameters)
    assert params.index("inplace") == torch_api.INPLACE_PARAM_CALLABLES["torch.nn.functional.relu"]
