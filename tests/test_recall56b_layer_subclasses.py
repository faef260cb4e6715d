"""Layers a module builds from other code than a torch construction written in place (issue 24, stop 56).

glow-pytorch (dev set4/406) keeps its layers in a helper module loaded as ``thops = modules =
import_module("glow_modules")`` and builds ``nn.Sequential(modules.Conv2d(c, h), nn.ReLU(), ...)``
where ``class Conv2d(nn.Conv2d)`` runs ``x = super().forward(input)``. Three facts were missing on
the way from the write to the save:

- ``super().forward(x)`` in a subclass of a torch layer runs that layer's ``forward``, so it saves
  what the layer saves (a convolution its input). Only where nothing can change that: the class has
  the one torch base, no class of the file or of the run extends it (a subclass with another base
  could put a class between the two), and it defines no method but ``__init__``, ``forward``,
  ``extra_repr`` and ``reset_parameters`` (``_conv_forward`` overridden may save a copy);
- ``helpers.Block(d)``, a class of another file of the run built through its module's name, is
  that class (its index summary), as ``from helpers import Block`` names it;
- ``a = b = import_module("m")`` binds both names to the module, as two statements do.

Every program is run with torch: the proven ones die in backward, the controls run.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import raises_proven, runs_unproven  # noqa: E402
from tests.test_recall39_callers import _findings, _gradients, _line, _project  # noqa: E402

_SUBCLASS = """import torch
import torch.nn as nn


class Conv(nn.Conv2d):
    def __init__(self, c):
        super().__init__(c, c, 3, padding=1)
{extra}
    def forward(self, x):
        y = super().forward(x)
        return y
{more}

def main():
    torch.manual_seed(0)
    conv = {build}
    x = torch.randn(1, 2, 5, 5, requires_grad=True)
    h = x * 2
    y = conv(h)
    h.add_(1)  # MARK
    y.sum().backward()
    return x.grad
"""


def _subclass(extra: str = "", more: str = "", build: str = "Conv(2)") -> str:
    return _SUBCLASS.format(extra=extra, more=more, build=build)


@pytest.mark.parametrize("extra", [
    "",
    "    def extra_repr(self):\n        return 'conv'\n",
    "        self.scale = 2.0\n",  # (an attribute stored in __init__: the layer reads no `scale`)
])
def test_a_torch_layers_subclass_saves_what_the_layer_saves(extra):
    raises_proven(_subclass(extra=extra))


def test_the_two_argument_super_form_is_the_same_call():
    raises_proven(_subclass().replace("super().forward(x)", "super(Conv, self).forward(x)"))


_CLONING = ("    def _conv_forward(self, input, weight, bias):\n"
            "        return super()._conv_forward(input.clone(), weight, bias)\n")


def test_a_subclass_overriding_what_the_layer_calls_stays_unproven():
    # the convolution saves the clone: writing into `h` afterwards is harmless
    runs_unproven(_subclass(extra=_CLONING))


def test_a_subclass_extended_with_another_base_stays_unproven():
    # Mixed's MRO puts Cloning between Conv and nn.Conv2d: Conv's `super().forward` runs Cloning's
    more = ("\n\nclass Cloning(nn.Conv2d):\n"
            "    def forward(self, x):\n"
            "        return super().forward(x.clone())\n\n\n"
            "class Mixed(Conv, Cloning):\n"
            "    pass\n")
    runs_unproven(_subclass(more=more, build="Mixed(2)"))


def test_a_linear_subclass_with_frozen_weights_stays_unproven():
    # F.linear saves its input only for the weight's gradient
    source = _subclass().replace("nn.Conv2d):", "nn.Linear):").replace("super().__init__(c, c, 3, padding=1)",
                                                                   "super().__init__(5, 5)\n        self.weight.requires_grad_(False)\n        self.bias.requires_grad_(False)")
    runs_unproven(source)


def test_a_subclass_of_a_layer_that_saves_nothing_stays_unproven():
    source = _subclass().replace("nn.Conv2d):", "nn.Dropout):").replace("super().__init__(c, c, 3, padding=1)",
                                                                    "super().__init__(0.5)")
    runs_unproven(source)


HELPERS = """\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def forward(self, x):
            return torch.sigmoid(x)


    class CopyBlock(nn.Module):
        def forward(self, x):
            return torch.sigmoid(x).clone()


    class Conv(nn.Conv2d):
        def __init__(self, c):
            super().__init__(c, c, 1)

        def forward(self, x):
            return super().forward(x)
"""

MODEL = """\
    import importlib

    import torch
    import torch.nn as nn

    {imports}


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = {build}

        def forward(self, x):
            y = self.block(x)
            {write}
            return y


    def compute():
        torch.manual_seed(0)
        x = torch.randn(1, 2, 3, 3, requires_grad=True)
        net = Net()
        net(x * 2).sum().backward()
        return [round(float(v), 5) for v in x.grad.flatten()]
"""

_IMPORTS = {
    "import": "import helpers",
    "import_module": "helpers = importlib.import_module(\"helpers\")",
    "chained": "helpers = layers = importlib.import_module(\"helpers\")",
}


def _proven(tmp_path, imports: str, build: str, write: str) -> list:
    text = MODEL.format(imports=imports, build=build, write=write)
    _project(tmp_path, {"helpers.py": HELPERS, "model.py": text})
    at = _line(tmp_path, "model.py", write)
    found = _findings(tmp_path, ["model.py", "helpers.py"])
    return [f for f in found if f[0] == "model.py" and f[1] == at and f[2].startswith("IPF1")]


@pytest.mark.parametrize("style", sorted(_IMPORTS))
def test_a_class_of_another_file_built_through_its_module_name_is_read(tmp_path, style):
    assert _proven(tmp_path, _IMPORTS[style], "helpers.Block()", "y.mul_(2)") != []
    assert _gradients(tmp_path, "model") is None  # it dies in backward


def test_the_second_name_of_a_chained_import_is_the_module_too(tmp_path):
    assert _proven(tmp_path, _IMPORTS["chained"], "layers.Block()", "y.mul_(2)") != []
    assert _gradients(tmp_path, "model") is None


@pytest.mark.parametrize("style", sorted(_IMPORTS))
def test_a_class_of_another_file_returning_a_copy_stays_unproven(tmp_path, style):
    assert _proven(tmp_path, _IMPORTS[style], "helpers.CopyBlock()", "y.mul_(2)") == []
    assert _gradients(tmp_path, "model") is not None  # it runs


def test_a_layer_subclass_of_another_file_saves_its_input(tmp_path):
    write = "x.add_(1)"
    text = MODEL.format(imports=_IMPORTS["chained"], build="layers.Conv(2)", write=write)
    _project(tmp_path, {"helpers.py": HELPERS, "model.py": text})
    at = _line(tmp_path, "model.py", write)
    found = _findings(tmp_path, ["model.py", "helpers.py"])
    assert [f for f in found if f[0] == "model.py" and f[1] == at and f[2].startswith("IPF1")] != []
    assert _gradients(tmp_path, "model") is None

