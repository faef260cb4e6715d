"""geoopt 0.5.1: the two proven findings of `inplacefix check` (eafcde2, stop 47):
`StereographicTreeDataset.get_directions` (datasets/stereographic.py:60 and :65) computes
`parent_value_n @ direction` (matmul saves `direction` for the gradient of `parent_value_n`) and
then writes `direction -= ...`. The path calls the method with a parent point requiring grad and
runs backward; the control has the line out of place (`direction = direction - ...`). The dataset
itself builds its tree from the ball's origin and detaches it (no grad): context."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import rewritten, replaced
from geoopt.datasets import stereographic

Tree = stereographic.StereographicTreeDataset
get_directions = Tree.get_directions
expect_line(get_directions, 60, "direction -= parent_value_n @ direction * parent_value_n")
expect_line(get_directions, 65, "directions -= (directions @ parent_value_n)[:, None] * parent_value_n")


def run(dim, children):
    torch.manual_seed(0)
    fake = Tree.__new__(Tree)
    fake.dim = dim
    parent = torch.randn(dim, requires_grad=True)
    Tree.get_directions(fake, parent, children).sum().backward()


for line, dim, children, old, new in (
    (60, 2, 2, "direction -= parent_value_n @ direction * parent_value_n",
     "direction = direction - parent_value_n @ direction * parent_value_n"),
    (65, 3, 4, "directions -= (directions @ parent_value_n)[:, None] * parent_value_n",
     "directions = directions - (directions @ parent_value_n)[:, None] * parent_value_n"),
):
    finding = "geoopt/datasets/stereographic.py:%d:IPF101" % line
    attempt(finding, "path", "get_directions(parent requiring grad, dim=%d, children=%d), backward" % (dim, children),
            lambda: run(dim, children))
    with replaced(Tree, "get_directions", rewritten(get_directions, [(old, new)])):
        attempt(finding, "control", "line %d out of place" % line, lambda: run(dim, children))
