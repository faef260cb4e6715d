"""``F.pad`` keeps its input for backward in the ``reflect`` and ``replicate`` modes (the reflection
and replication pads' backward reads it), not in ``constant`` (the default) or ``circular``. The op
data was measured in the default mode only, so a write into the padded tensor after a reflect pad
was taken to break nothing: kornia's ``distance_transform`` (set17/1105) clones the image, pads it
through ``filter2d(boundary, kernel, border_type='replicate')`` and marks ``boundary[mask == 1] = 1``.

A module-level helper's mode parameter (``mode=border_type``) is read as what every call of the
helper in the file passes, or its default. Each look-alike that raises is run with torch; each
control runs backward and stays unproven: the modes that keep nothing, modes of both kinds
among the calls, and a mode the analysis cannot read.
"""

from __future__ import annotations

import pytest

from tests.programs import raises_proven, runs_unproven

HEAD = """import torch
import torch.nn.functional as F


def filter2d(input, kernel, border_type='reflect'):
    input = F.pad(input, [1, 1, 1, 1], mode=border_type)
    return F.conv2d(input, kernel)

"""

RAISING = {
    "reflect-keyword-then-iadd": """
def main():
    w = torch.randn(1, 1, 4, 4, requires_grad=True)
    x = w * 2
    y = F.pad(x, [1, 1, 1, 1], mode="reflect")
    x += 1  # MARK
    (y.sum() + x.sum()).backward()
""",
    "replicate-positional-1d-then-mul_": """
def main():
    w = torch.randn(2, 3, 5, requires_grad=True)
    x = w * 2
    y = F.pad(x, [1, 2], "replicate")
    x.mul_(2)  # MARK
    (y.sum() + x.sum()).backward()
""",
    "reflect-3d-then-setitem": """
def main():
    w = torch.randn(1, 1, 4, 4, 4, requires_grad=True)
    x = w + 1
    y = F.pad(x, [1, 1, 1, 1, 1, 1], mode="reflect")
    x[..., 0] = 0  # MARK
    y.sum().backward()
""",
    "helper-passed-replicate-then-mask-write": """
def main():
    img = torch.randn(1, 1, 5, 5, requires_grad=True)
    kernel = torch.ones(1, 1, 3, 3)
    boundary = img.clone()
    for _ in range(2):
        cdt = filter2d(boundary, kernel, border_type="replicate")
        boundary[cdt > 0] = 1  # MARK
    cdt.sum().backward()
""",
    "helper-default-reflect-then-iadd": """
def main():
    img = torch.randn(1, 1, 5, 5, requires_grad=True)
    kernel = torch.ones(1, 1, 3, 3)
    x = img * 3
    out = filter2d(x, kernel)
    x += 1  # MARK
    (out.sum() + x.sum()).backward()
""",
}

CONTROLS = {
    "constant-keyword-then-iadd": """
def main():
    w = torch.randn(1, 1, 4, 4, requires_grad=True)
    x = w * 2
    y = F.pad(x, [1, 1, 1, 1], mode="constant", value=0.5)
    x += 1  # MARK
    (y.sum() + x.sum()).backward()
""",
    "circular-then-mul_": """
def main():
    w = torch.randn(1, 1, 4, 4, requires_grad=True)
    x = w * 2
    y = F.pad(x, [1, 1, 1, 1], mode="circular")
    x.mul_(2)  # MARK
    (y.sum() + x.sum()).backward()
""",
    "default-mode-then-setitem": """
def main():
    w = torch.randn(2, 3, 5, requires_grad=True)
    x = w + 1
    y = F.pad(x, [1, 2])
    x[..., 0] = 0  # MARK
    (y.sum() + x.sum()).backward()
""",
    "helper-passed-constant-then-write": """
def main():
    img = torch.randn(1, 1, 5, 5, requires_grad=True)
    kernel = torch.ones(1, 1, 3, 3)
    boundary = img.clone()
    cdt = filter2d(boundary, kernel, border_type="constant")
    boundary[cdt > 0] = 1  # MARK
    (cdt.sum() + boundary.sum()).backward()
""",
    "helper-modes-of-both-kinds": """
def main():
    img = torch.randn(1, 1, 5, 5, requires_grad=True)
    kernel = torch.ones(1, 1, 3, 3)
    other = filter2d(img * 2, kernel, border_type="reflect")
    boundary = img.clone()
    cdt = filter2d(boundary, kernel, border_type="constant")
    boundary[cdt > 0] = 1  # MARK
    (other.sum() + cdt.sum() + boundary.sum()).backward()
""",
    "mode-read-from-a-variable": """
def main(mode="constant"):
    w = torch.randn(1, 1, 4, 4, requires_grad=True)
    x = w * 2
    y = F.pad(x, [1, 1, 1, 1], mode=mode)
    x += 1  # MARK
    (y.sum() + x.sum()).backward()
""",
}


@pytest.mark.parametrize("name", sorted(RAISING))
def test_reflect_and_replicate_pads_keep_their_input(name):
    raises_proven(HEAD + RAISING[name])


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_pads_keeping_nothing_or_unread_stay_unproven(name):
    runs_unproven(HEAD + CONTROLS[name])
