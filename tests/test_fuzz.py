"""Fuzzing: generated programs and mutated real files through every pass and mode.

No crash, every output parses, a second run changes nothing, and a file without candidates
comes back byte-identical. A short bounded run here, on a fixed sample (``derandomize``: the
suite gives the same answer on every run; a case found by exploring is added below, as a
regression); ``bench/fuzz.py`` runs longer on fresh samples.
"""

from __future__ import annotations

import ast
import random

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.testing import FUZZ_CORPUS, mutate


EVERYTHING = Settings(select=("ALL",), unsafe_fixes=True)
CORPUS = FUZZ_CORPUS


def check_program(source: str) -> None:
    data = ("import torch\n" + source).encode("utf-8")
    result = process_source(data, "fuzz.py", EVERYTHING, fix=True, edits=True)
    assert result.error is None or not result.error.message.startswith("internal error"), result.error
    if result.error is not None:
        return
    if not result.changed:
        return
    ast.parse(result.fixed)
    again = process_source(result.fixed.encode("utf-8"), "fuzz.py", EVERYTHING, fix=True)
    assert not again.changed, f"not idempotent:\n{result.fixed}\n---\n{again.fixed}"


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(hypothesmith.from_node())
def test_generated_programs(source):
    check_program(source)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.sampled_from(CORPUS), st.integers(0, 2**32 - 1))
def test_mutated_real_files(path, seed):
    text = mutate(path.read_text(), random.Random(seed))
    result = process_source(text.encode("utf-8"), path.name, EVERYTHING, fix=True)
    assert result.error is None or not result.error.message.startswith("internal error"), result.error
    if result.changed:
        ast.parse(result.fixed)
        assert not process_source(result.fixed.encode(), path.name, EVERYTHING, fix=True).changed


@pytest.mark.parametrize("name, seed", [
    ("base_read_after_chunk.in.py", 2396),  # `a *= 2` twice on an output of `chunk`
    ("denormalise_in_place_loop.in.py", 100),  # `t.mul_(s).add_(m)` twice in the loop
    ("modify_a_copy.in.py", 13),  # `c.index_copy_(...)` three times on a leaf read after
    ("fill_conv_weight.in.py", 195),  # `conv.bias.zero_()` twice: the second wrap took the first
])
def test_mutations_the_fuzzer_found_are_fixed_once(name, seed):
    """Each was rewritten again by a second run: the first two by an unsafe (or safe) rebinding
    that hid the write from the tensor viewed, the third by rewriting the copy's own updates;
    the fourth crashed (two `no_grad` wraps of equal statements, found by equality)."""
    path = next(p for p in CORPUS if p.name == name)
    text = mutate(path.read_text(), random.Random(seed))
    result = process_source(text.encode("utf-8"), name, EVERYTHING, fix=True)
    fixed = result.fixed if result.changed else text  # the third now gets no copy fix: two updates follow
    again = process_source(fixed.encode("utf-8"), name, EVERYTHING, fix=True)
    assert not again.changed, again.fixed


CANDIDATE_FREE = [
    b"import torch\r\nx = torch.ones(2) + 1\r\n",
    b"\xef\xbb\xbfimport torch\ndef_ = 1\nif True:\n\ty = torch.zeros(3)  # tabs\n",
    b"# -*- coding: latin-1 -*-\nimport torch\ns = 'caf\xe9'\n",
    b"import torch\nd = {}\nd['k'] = torch.ones(1)\nn = 0\nn += 1\n",
]


@pytest.mark.parametrize("data", CANDIDATE_FREE, ids=["crlf", "bom-tabs", "latin1", "non-tensors"])
def test_no_candidates_means_byte_identical(tmp_path, data):
    from codemod.engine.files import process_path

    path = tmp_path / "same.py"
    path.write_bytes(data)
    result = process_path(str(path), EVERYTHING, fix=True, write=True, edits=False)
    assert result.error is None and not result.changed and result.findings == []
    assert path.read_bytes() == data
