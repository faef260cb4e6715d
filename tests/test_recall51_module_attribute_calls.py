"""Family A: a function of another file of the run called through its module's name
(``helpers.act(w)``, where ``helpers`` is bound by ``import helpers`` or
``helpers = importlib.import_module("helpers")``) returns what autograd saved; the caller
then writes into it in place (issue 24, stop 51).

The summary of a function of another file (``SummaryFact``: its result is the output of an op
that saves it) reached a call only through ``from helpers import act``; a call through the
module's name was left unresolved, so the write was not proven. Look-alikes that run stay
unproven: the helper returns a clone (nothing saved), the module name is a local of the caller
(a parameter: any object), the name is rebound at the top level. Every program is run with torch.
"""

from __future__ import annotations

import pytest

from tests.test_recall39_callers import _findings, _gradients, _line, _project

HELPERS = """\
    import torch


    def act(x):
        return torch.sigmoid(x)


    def act_copy(x):
        return torch.sigmoid(x).clone()
"""

MODEL = """\
    {imports}


    def compute():
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        y = helpers.{func}(w)
        y.mul_(2)
        y.sum().backward()
        return [round(float(v), 5) for v in w.grad]
"""

IMPORTS = {
    "import": "import torch\nimport helpers",
    "import_module": "import importlib\nimport torch\nhelpers = importlib.import_module(\"helpers\")",
    "import_as": "import torch\nimport helpers as helpers",
}


def _proven(tmp_path, imports: str, func: str) -> list:
    text = MODEL.format(imports=imports.replace("\n", "\n    "), func=func)
    _project(tmp_path, {"helpers.py": HELPERS, "model.py": text})
    at = _line(tmp_path, "model.py", "y.mul_(2)")
    found = _findings(tmp_path, ["model.py", "helpers.py"])
    return [f for f in found if f[0] == "model.py" and f[1] == at and f[2].startswith("IPF1")]


@pytest.mark.parametrize("style", sorted(IMPORTS))
def test_a_saved_output_returned_through_the_module_name_is_proven(tmp_path, style):
    assert _proven(tmp_path, IMPORTS[style], "act") != []
    assert _gradients(tmp_path, "model") is None  # it dies in backward


@pytest.mark.parametrize("style", sorted(IMPORTS))
def test_a_clone_returned_through_the_module_name_is_not_proven(tmp_path, style):
    assert _proven(tmp_path, IMPORTS[style], "act_copy") == []
    assert _gradients(tmp_path, "model") is not None  # it runs


LOCAL = """\
    import torch
    import helpers


    def run(helpers, w):
        y = helpers.act(w)
        y.mul_(2)
        return y


    class Other:
        @staticmethod
        def act(x):
            return x * 1


    def compute():
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        run(Other, w).sum().backward()
        return [round(float(v), 5) for v in w.grad]
"""


def test_a_module_name_shadowed_by_a_parameter_is_not_followed(tmp_path):
    _project(tmp_path, {"helpers.py": HELPERS, "model.py": LOCAL})
    at = _line(tmp_path, "model.py", "y.mul_(2)")
    found = _findings(tmp_path, ["model.py", "helpers.py"])
    assert [f for f in found if f[1] == at and f[2].startswith("IPF1")] == []
    assert _gradients(tmp_path, "model") is not None


REBOUND = """\
    import torch
    import helpers


    class Other:
        @staticmethod
        def act(x):
            return x * 1


    helpers = Other


    def compute():
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        y = helpers.act(w)
        y.mul_(2)
        y.sum().backward()
        return [round(float(v), 5) for v in w.grad]
"""


def test_a_module_name_rebound_at_the_top_is_not_followed(tmp_path):
    _project(tmp_path, {"helpers.py": HELPERS, "model.py": REBOUND})
    at = _line(tmp_path, "model.py", "y.mul_(2)")
    found = _findings(tmp_path, ["model.py", "helpers.py"])
    assert [f for f in found if f[1] == at and f[2].startswith("IPF1")] == []
    assert _gradients(tmp_path, "model") is not None
