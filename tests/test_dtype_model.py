"""The project's dtypes decide whether `x = x op y` can take another dtype than `x op= y` keeps.

Where nothing in the run's files makes another dtype than float32, int64 and bool, the rewrite of
an in-place op with a tensor operand is safe (no `dtype-promotion`); anything that makes (or may
make) another dtype, in the file or in any other file of the run, keeps it unsafe.
"""

from __future__ import annotations

import ast
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from codemod.analysis.dtype import other_dtype

torch = pytest.importorskip("torch")

MIXED = [
    "y = x.half()",
    "y = x.to(torch.bfloat16)",
    "y = torch.zeros(3, dtype=torch.float64)",
    "y = torch.zeros(3, dtype=dtype)",  # a dtype the analysis cannot read
    "y = x.to(self.dtype)",
    "with torch.autocast('cuda'):\n    y = f(x)",
    "scaler = torch.cuda.amp.GradScaler()",
    "parser.add_argument('--precision', default='bf16')",
    "y = torch.from_numpy(a)",
    "import numpy as np\ny = torch.tensor(np.ones(3))",
    "y = x.int()",
    "y = torch.ones(3, dtype=torch.int)",
    "y = x.type(torch.DoubleTensor)",
    "torch.set_default_dtype(torch.float64)",
    "model = AutoModel.from_pretrained(name, torch_dtype='auto')",
    "data = torch.load('features.pt')",  # tensors saved by anyone, in any dtype
    "y = x.cdouble()",  # complex128: complex64 op complex128 promotes
    "y = torch.zeros(3, dtype=torch.complex128)",
    "y = x.cfloat()",  # a conversion: still counted
]
ONE = [
    "y = x.float()\nz = i.long()\nm = (x > 0).bool()",
    "y = torch.zeros(3, dtype=torch.float32)\nz = torch.arange(3, dtype=torch.long)",
    "y = torch.zeros_like(x, dtype=x.dtype)",
    "y = x.to(device)\nz = x.to(x.device)",
    "import numpy as np\ny = torch.tensor([1.0, 2.0])\nz = np.zeros(3)",
    'def f(x):\n    """Runs in half the time of the double loop."""\n    return x * 2',
    "model.load_state_dict(torch.load(path))",  # copied into the parameters, in their dtype
    # complex64 made of the project's float32 (`test_complex64_made_from_float32_never_promotes`)
    "y = torch.view_as_complex(x.contiguous())\nz = torch.view_as_real(y)",
    "y = torch.polar(r, theta)\nz = torch.complex(a, b)",
    "y = torch.istft(torch.view_as_complex(s), 8)",
]


@pytest.mark.parametrize("code", MIXED)
def test_what_makes_another_dtype(code):
    assert other_dtype(ast.parse(code)) is not None


@pytest.mark.parametrize("code", ONE)
def test_what_keeps_one_dtype(code):
    assert other_dtype(ast.parse(code)) is None


def test_float32_and_int64_code_never_promotes():
    """The claim the safe rewrite rests on, checked with torch: in float32 / int64 / bool code,
    the out-of-place result has the target's dtype whatever the other operand."""
    operands = [torch.ones(3), torch.ones(3, dtype=torch.long), torch.ones(3, dtype=torch.bool),
                torch.tensor(2.0), torch.tensor(2), 2, 2.5, True]
    for x in (torch.ones(3), torch.ones(3, dtype=torch.long)):
        for y in operands:
            for op in ("add", "sub", "mul", "div", "remainder", "pow", "true_divide"):
                try:
                    kept = getattr(x.clone(), op + "_")(y).dtype
                except RuntimeError:
                    continue  # the in-place form raises (int64 target, float result): nothing to keep
                assert getattr(torch, op)(x, y).dtype == kept, (x.dtype, y, op)


def test_complex64_made_from_float32_never_promotes():
    """What lets complex64 made from the project's float32 (`view_as_complex`, `polar`,
    `complex`, `.cfloat()`) keep a project "one dtype", checked with torch: wherever the in-place
    form runs (a float target with a complex operand raises), the out-of-place result has the
    target's dtype, for float32, int64, bool and complex64 targets and operands, full or 0-dim,
    and Python numbers."""
    dtypes = [torch.float32, torch.long, torch.bool, torch.complex64]
    operands = [torch.ones(3, dtype=d) for d in dtypes] + [torch.ones((), dtype=d) for d in dtypes] + [2, 2.5, True, 1j]
    checked = 0
    for x in (torch.ones(3, dtype=d) for d in dtypes):
        for y in operands:
            for op in ("add", "sub", "mul", "div", "true_divide", "pow", "remainder", "fmod", "atan2", "xlogy"):
                try:
                    kept = getattr(x.clone(), op + "_")(y).dtype
                except (RuntimeError, TypeError):
                    continue  # the in-place form raises: nothing to keep
                checked += 1
                assert getattr(torch, op)(x, y).dtype == kept, (x.dtype, y, op)
    assert checked > 100


BLOCK = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            h = torch.relu(self.fc(x))
            h += self.fc(x)
            return h
""")
TRAIN = "import torch\nfrom blocks import Block\n\nmodel = Block(4)\n"


def statuses(*paths, cwd, cache=False):
    command = [sys.executable, "-m", "codemod", "check", "--format", "json", *map(str, paths)]
    if not cache:
        command.insert(4, "--no-cache")
    # this tree's codemod, not the one the environment has installed (another checkout)
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(__file__).resolve().parent.parent)}
    run = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env)
    assert run.returncode in (0, 1), run.stderr
    return [(f["code"], f["status"], f["reason"]) for f in json.loads(run.stdout)["findings"]
            if f["filename"].endswith("blocks.py")]


def test_another_file_of_the_run_that_makes_half_keeps_the_fix_unsafe(tmp_path):
    (tmp_path / "blocks.py").write_text(BLOCK)
    (tmp_path / "train.py").write_text(TRAIN)
    assert statuses("blocks.py", "train.py", cwd=tmp_path) == [("IPF101", "safe", None)]
    (tmp_path / "train.py").write_text(TRAIN + "model.half()\n")
    assert statuses("blocks.py", "train.py", cwd=tmp_path) == [("IPF101", "unsafe", "dtype-promotion")]


def test_the_cache_follows_the_other_files_dtypes(tmp_path):
    (tmp_path / "blocks.py").write_text(BLOCK)
    (tmp_path / "train.py").write_text(TRAIN)
    assert statuses(".", cwd=tmp_path, cache=True) == [("IPF101", "safe", None)]
    assert statuses(".", cwd=tmp_path, cache=True) == [("IPF101", "safe", None)]
    (tmp_path / "train.py").write_text(TRAIN + "with torch.autocast('cpu'):\n    model(torch.ones(2, 4))\n")
    assert statuses(".", cwd=tmp_path, cache=True) == [("IPF101", "unsafe", "dtype-promotion")]


def test_only_files_linked_by_imports_count(tmp_path):
    """A file of the run that neither imports `blocks` nor is imported with it cannot hand it a
    tensor: its half precision does not count; a file importing both links them."""
    (tmp_path / "blocks.py").write_text(BLOCK)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "other.py").write_text("import torch\n\n\ndef run(x):\n    return x.half()\n")
    assert statuses(".", cwd=tmp_path) == [("IPF101", "safe", None)]
    (tmp_path / "main.py").write_text("import other\nimport train\n\nother.run(train.model)\n")
    assert statuses(".", cwd=tmp_path) == [("IPF101", "unsafe", "dtype-promotion")]


def test_mixed_dtypes_in_the_configuration_keeps_the_fix_unsafe(tmp_path):
    """A library that others run under autocast or `.half()` shows no other dtype in its own
    files: `mixed-dtypes = true` says so."""
    (tmp_path / "blocks.py").write_text(BLOCK)
    assert statuses("blocks.py", cwd=tmp_path) == [("IPF101", "safe", None)]
    (tmp_path / "pyproject.toml").write_text("[tool.inplacefix]\nmixed-dtypes = true\n")
    assert statuses("blocks.py", cwd=tmp_path) == [("IPF101", "unsafe", "dtype-promotion")]


def test_complex64_made_of_float32_keeps_the_fix_safe_and_complex128_does_not(tmp_path):
    """A spectrogram helper (`view_as_complex` of a float32 tensor, then `istft`) makes complex64
    only: the rewrite stays safe; a `.cdouble()` makes complex128: unsafe (torchaudio griffinlim)."""
    (tmp_path / "blocks.py").write_text(BLOCK)
    spectral = TRAIN + "spec = torch.view_as_complex(torch.randn(4, 3, 2))\nwave = torch.istft(spec, 6)\n"
    (tmp_path / "train.py").write_text(spectral)
    assert statuses("blocks.py", "train.py", cwd=tmp_path) == [("IPF101", "safe", None)]
    (tmp_path / "train.py").write_text(spectral + "wide = spec.cdouble()\n")
    assert statuses("blocks.py", "train.py", cwd=tmp_path) == [("IPF101", "unsafe", "dtype-promotion")]
