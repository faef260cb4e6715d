"""Stop 51: a false proven group prec51b found on never-measured code (agilerl's bandit updates):
a tensor written in place after ``s @ v`` saved it for ``v``'s gradient, where ``v`` is built from
constants and the result of a call the analysis cannot see into (``np.sqrt(n)``, an imported
helper). Nothing shows ``v`` requires grad, so the save is possible, not proven (unknown is not
yes). The look-alikes where ``v`` is shown to require grad raise and stay proven.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project, proven, raises_inplace, run_program  # noqa: E402

BINARY = '''\
import numpy as np
import torch


class Bandit:
    def __init__(self, n):
        self.sigma_inv = 0.1 * torch.eye(n)

    def update(self, n):
        g = torch.ones(n) / np.sqrt(n)
        v = g.unsqueeze(-1)
        self.sigma_inv -= self.sigma_inv @ v @ v.T @ self.sigma_inv  # MARK
        return self.sigma_inv


def main():
    b = Bandit(4)
    return b.update(4)
'''
# a call form of the same save: `torch.matmul(s, v)` saves `s` for `v`'s gradient
CALL = BINARY.replace("self.sigma_inv @ v @ v.T @ self.sigma_inv  # MARK",
                      "torch.matmul(self.sigma_inv, v) @ v.T  # MARK")
# `v` requires grad: the save is made, and the write breaks it
BINARY_GRAD = BINARY.replace("torch.ones(n) / np.sqrt(n)", "torch.ones(n).requires_grad_() / np.sqrt(n)").replace(
    "    return b.update(4)\n", "    b.update(4).sum().backward()\n")
CALL_GRAD = CALL.replace("torch.ones(n) / np.sqrt(n)", "torch.ones(n).requires_grad_() / np.sqrt(n)").replace(
    "    return b.update(4)\n", "    b.update(4).sum().backward()\n")


def _possible_lines(source: str) -> set:
    result = process_in_project(source, Settings(select=("ALL",)))
    return {f.span.line for f in result.findings if f.code.startswith("IPF2")}


def _marked(source: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# MARK")}


@pytest.mark.parametrize("source", [BINARY, CALL], ids=["binary-operator", "call"])
def test_a_save_for_an_operand_nothing_shows_requires_grad_is_possible_only(source):
    assert run_program(source) is not None  # runs: nothing recorded a graph
    assert not _marked(source) & {line for _, line in proven(source)}
    assert _marked(source) <= _possible_lines(source)


@pytest.mark.parametrize("source", [BINARY_GRAD, CALL_GRAD], ids=["binary-operator", "call"])
def test_the_look_alikes_whose_operand_requires_grad_raise_and_stay_proven(source):
    assert raises_inplace(source)
    assert _marked(source) <= {line for _, line in proven(source)}
