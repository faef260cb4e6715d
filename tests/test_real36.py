"""Stop 36 (issue 24, precision on code bases never measured before): false proven hazards found
on ultralytics, alphafold3-pytorch and audiolm-pytorch, each written from scratch in the shape of
the library code that showed it (labels by running in bench/hazard_checks24/:
ultralytics_checks.py, alphafold3_checks.py, audiolm_checks.py).

Per case, one test runs the program with torch (inputs that require grad: nothing raises, the
label is false; a variant where the write does matter raises, so the label test can fail), and one
asks the static check (nothing imported, nothing run). Groups the analysis cannot decide yet are
strict xfails with the reason; each fixed group has negative controls that stay proven.
"""

from __future__ import annotations

import sys
import types

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward


def _proven(source: str):
    """The default report (proven tier): (code, line) of each finding."""
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [(f.code, f.span.line) for f in result.findings]


def _einops_stand_in() -> types.ModuleType:
    """The two einops patterns the programs use, in torch ops (einops is not a test dependency)."""
    module = types.ModuleType("einops")

    def rearrange(t, pattern):
        return {"i c -> i 1 c": lambda: t.unsqueeze(1), "j c -> 1 j c": lambda: t.unsqueeze(0)}[pattern]()

    module.rearrange = rearrange  # type: ignore[attr-defined]
    return module


def _defined(source: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    if "einops" not in sys.modules:
        try:
            import einops  # noqa: F401
        except ImportError:
            monkeypatch.setitem(sys.modules, "einops", _einops_stand_in())
    namespace: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _view_write_raises(fn) -> bool:
    """True where ``fn`` dies with PyTorch's refusal of an in-place write into a view."""
    try:
        fn()
    except RuntimeError as error:
        return "is being modified inplace" in str(error)
    return False


# ------------------------------------------------------------------ a view of constants
# In the forward of a layer that owns parameters, relative positions are built from `arange`
# only (through einops, which the analysis does not read) and unbound; writing into an output of
# `unbind` is refused by PyTorch only when the tensor viewed (or the value written) requires grad.
# The analysis took every view made in such a forward to be of an activation (audiolm-pytorch's
# FineTransformer position bias, audiolm_pytorch.py:1277/1278).
POSITIONS = """\
import torch
from einops import rearrange
from torch import nn


class RelativeBias(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.mlp = nn.Linear(2, heads)

    def forward(self, x, n, q):
        pos = torch.arange(n)
        offsets = torch.arange(q)
        grid = torch.stack((pos.clamp(min=0), offsets), dim=-1)
        rel = rearrange(grid, 'i c -> i 1 c') - rearrange(grid, 'j c -> 1 j c')
        rel_pos, rel_offset = rel.unbind(dim=-1)
        rel_pos += n - 1
        rel_offset += q - 1
        bias = self.mlp(torch.stack((rel_pos, rel_offset), dim=-1).float())
        return x + bias.sum(-1)
"""
POSITIONS_WRITES = (17, 18)
# the same layer where the relative positions come from the input: a view of an activation
ACTIVATION = POSITIONS.replace("rel = rearrange(grid, 'i c -> i 1 c') - rearrange(grid, 'j c -> 1 j c')",
                              "rel = rearrange(self.mlp(x.unsqueeze(-1).expand(-1, 2))[:, :2], 'i c -> i 1 c')")
# the value written requires grad (an argument a test passes with grad): PyTorch refuses it too
WRITTEN = POSITIONS.replace("rel_pos += n - 1", "rel_pos += self.mlp(x.new_ones(2)).sum()")


def test_relative_positions_from_arange_run():
    layer = _defined(POSITIONS, pytest.MonkeyPatch())["RelativeBias"]

    def run(source):
        def go():
            torch.manual_seed(0)
            module = _defined(source, pytest.MonkeyPatch())["RelativeBias"](4)
            x = torch.randn(3, requires_grad=True)
            module(x, 3, 3).sum().backward()
        return go

    assert layer is not None
    for line in POSITIONS_WRITES:
        assert "+=" in POSITIONS.splitlines()[line - 1]
    assert not _view_write_raises(run(POSITIONS))
    assert _view_write_raises(run(WRITTEN))
    assert _view_write_raises(run(ACTIVATION))


def test_relative_positions_from_arange_are_not_proven():
    found = _proven(POSITIONS)
    assert not [f for f in found if f[1] in POSITIONS_WRITES], found


def test_views_of_activations_and_grad_values_stay_proven():
    assert ("IPF106", 17) in _proven(ACTIVATION)
    assert ("IPF106", 17) in _proven(WRITTEN)


# the same positions shifted by an integer the layer holds (`self.num_quantizers`, stored from a
# constructor argument that nothing annotates): audiolm's own shape. The analysis does not know the
# attribute is a number, so `grid` is not shown to require no grad.
HELD = POSITIONS.replace("""    def __init__(self, heads):
        super().__init__()""", """    def __init__(self, heads, num_quantizers=2):
        super().__init__()
        self.num_quantizers = num_quantizers""").replace(
    "offsets = torch.arange(q)", "offsets = torch.arange(q) + self.num_quantizers")
HELD_WRITES = (18, 19)


def test_positions_shifted_by_a_held_number_run():
    def go():
        module = _defined(HELD, pytest.MonkeyPatch())["RelativeBias"](4)
        module(torch.randn(3, requires_grad=True), 3, 3).sum().backward()

    for line in HELD_WRITES:
        assert "+=" in HELD.splitlines()[line - 1]
    assert not _view_write_raises(go)


def test_positions_shifted_by_a_held_number_are_not_proven():
    found = _proven(HELD)
    assert not [f for f in found if f[1] in HELD_WRITES], found


# audiolm's own shape: the argument has no default; it is read as a size (an embedding's rows),
# which torch accepts only from an integer, before the instance keeps it
SIZED = HELD.replace("num_quantizers=2):", "num_quantizers):").replace(
    "        self.mlp = nn.Linear(2, heads)\n",
    "        self.mlp = nn.Linear(2, heads)\n        self.embed = nn.Embedding(num_quantizers * 4, heads)\n")
SIZED_WRITES = (19, 20)
# look-alikes that must stay proven: the instance keeps a tensor that requires grad (a parameter,
# written as the shift), or an argument read as no size (it may be such a tensor)
HELD_PARAMETER = HELD.replace("self.num_quantizers = num_quantizers",
                              "self.num_quantizers = nn.Parameter(torch.ones(()))")
HELD_UNSIZED = SIZED.replace("nn.Embedding(num_quantizers * 4, heads)", "nn.Embedding(8, heads)")


def test_shift_held_as_a_size_runs_and_a_held_parameter_raises():
    def go(source, shift=None):
        def run():
            module = _defined(source, pytest.MonkeyPatch())["RelativeBias"](4, *([] if shift is None else [shift]))
            module(torch.randn(3, requires_grad=True), 3, 3).sum().backward()
        return run

    for line in SIZED_WRITES:
        assert "+=" in SIZED.splitlines()[line - 1]
    assert not _view_write_raises(go(SIZED, 2))
    assert _view_write_raises(go(HELD_PARAMETER))
    assert _view_write_raises(go(HELD_UNSIZED, torch.tensor(2.0, requires_grad=True)))

    def learnt():
        module = _defined(SUBCLASSED, pytest.MonkeyPatch())["Learnt"](4, 2)
        module(torch.randn(3, requires_grad=True), 3, 3).sum().backward()
    assert _view_write_raises(learnt)


# a wrapper of another class keeping its own count under the same name changes nothing; a subclass
# setting it to a parameter writes into the layer's instances: then it is no held number
WRAPPED = SIZED + """

class Wrapper(nn.Module):
    def __init__(self, layer, groups):
        super().__init__()
        self.num_quantizers = layer.num_quantizers * groups
"""
SUBCLASSED = SIZED + """

class Learnt(RelativeBias):
    def __init__(self, heads, num_quantizers):
        super().__init__(heads, num_quantizers)
        self.num_quantizers = nn.Parameter(torch.ones(()))
"""


def test_shift_held_as_a_size_is_not_proven_and_look_alikes_stay_proven():
    for source in (SIZED, WRAPPED):
        found = _proven(source)
        assert not [f for f in found if f[1] in SIZED_WRITES], found
    assert ("IPF106", SIZED_WRITES[0]) in _proven(SUBCLASSED)
    assert ("IPF106", HELD_WRITES[0]) in _proven(HELD_PARAMETER)
    assert ("IPF106", SIZED_WRITES[0]) in _proven(HELD_UNSIZED)


# ------------------------------------------------------------------ a grad-off decorator factory
# A method wrapped by a decorator factory of the project that runs it under `torch.inference_mode()`
# (ultralytics' `@smart_inference_mode()` around MobileCLIP.encode_text, text_model.py:251): the
# write runs with grad off. The analysis knows torch's own decorators only.
DECORATED = """\
import torch
from torch import nn


def inference_only(enabled=True):
    def decorate(fn):
        if not enabled:
            return fn
        return torch.inference_mode()(fn)
    return decorate


class TextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 8)

    @inference_only()
    def encode(self, tokens):
        features = self.proj(tokens)
        features /= features.norm(p=2, dim=-1, keepdim=True)
        return features
"""
DECORATED_WRITE = 21


def test_method_under_a_grad_off_decorator_factory_runs():
    encoder = _defined(DECORATED, pytest.MonkeyPatch())["TextEncoder"]

    def run(undecorated):
        def go():
            torch.manual_seed(0)
            module = encoder()
            method = encoder.encode.__wrapped__ if undecorated else encoder.encode
            out = method(module, torch.randn(2, 6))
            if out.requires_grad:
                out.sum().backward()
        return go

    assert DECORATED.splitlines()[DECORATED_WRITE - 1].strip().startswith("features /=")
    assert not raises_at_backward(run(False))
    assert raises_at_backward(run(True))  # the body without its decorator does raise


def test_method_under_a_grad_off_decorator_factory_is_not_proven():
    assert ("IPF101", DECORATED_WRITE) not in _proven(DECORATED)


# look-alikes that stay proven: the factory asked for its pass-through (`enabled=False`), given
# what the analysis cannot read, or one whose pass-through branch nothing decides
PASSED_THROUGH = DECORATED.replace("@inference_only()", "@inference_only(enabled=False)")
UNDECIDED = DECORATED.replace("@inference_only()", "@inference_only(FLAG)").replace(
    "class TextEncoder", "FLAG = __import__('os').environ.get('GRAD') == '1'\n\n\nclass TextEncoder")
TRAINING_TOO = DECORATED.replace("        if not enabled:\n            return fn\n",
                                 "        if getattr(fn, 'trainable', False):\n            return fn\n")
# the factory of ultralytics' shape in another file: a wrapper under `inference_mode(False), no_grad()`
# where it is turned off, the function unchanged only where inference mode is already on
FACTORY_FILE = """\
import functools

import torch


def smart_inference(mode=True):
    def decorate(fn):
        if not mode:
            @functools.wraps(fn)
            def disable(*args, **kwargs):
                with torch.inference_mode(False), torch.no_grad():
                    return fn(*args, **kwargs)
            return disable
        if torch.is_inference_mode_enabled() and True:
            return fn
        return (torch.inference_mode if hasattr(torch, 'inference_mode') else torch.no_grad)()(fn)
    return decorate


def plain(mode=True):
    def decorate(fn):
        return fn
    return decorate
"""
USER_FILE = DECORATED.replace("import torch\n", "import torch\n\nfrom helpers import plain, smart_inference\n", 1)
USER_FILE = USER_FILE[:USER_FILE.index("def inference_only")] + USER_FILE[USER_FILE.index("class TextEncoder"):]


def test_decorator_look_alikes_run():
    for source, name, raises in ((PASSED_THROUGH, "TextEncoder", True), (TRAINING_TOO, "TextEncoder", False)):
        encoder = _defined(source, pytest.MonkeyPatch())[name]

        def go(encoder=encoder):
            out = encoder.encode(encoder(), torch.randn(2, 6))
            if out.requires_grad:
                out.sum().backward()
        assert raises_at_backward(go) is raises, source


def test_decorator_look_alikes_stay_proven():
    for source in (PASSED_THROUGH, UNDECIDED, TRAINING_TOO):
        assert ("IPF101", DECORATED_WRITE + (3 if source is UNDECIDED else 0)) in _proven(source), source


def _project_proven(tmp_path, user: str):
    from codemod.engine.project import build_index

    (tmp_path / "helpers.py").write_text(FACTORY_FILE)
    (tmp_path / "user.py").write_text(user)
    files = [str(tmp_path / "helpers.py"), str(tmp_path / "user.py")]
    result = process_source(user.encode(), files[1], Settings(select=("IPF1",)), project=build_index(files),
                            module_name="user")
    return [(f.code, f.span.line) for f in result.findings], user.splitlines().index(
        "        features /= features.norm(p=2, dim=-1, keepdim=True)") + 1


def test_a_grad_off_factory_of_another_file_runs(tmp_path, monkeypatch, request):
    (tmp_path / "helpers.py").write_text(FACTORY_FILE)
    monkeypatch.syspath_prepend(str(tmp_path))
    # this `helpers` is imported in the process: gone again after the test, for other tests' own
    sys.modules.pop("helpers", None)
    request.addfinalizer(lambda: sys.modules.pop("helpers", None))
    for decorator, raises in (("@smart_inference()", False), ("@smart_inference(False)", False), ("@plain()", True)):
        encoder = _defined(USER_FILE.replace("@inference_only()", decorator), monkeypatch)["TextEncoder"]

        def go(encoder=encoder):
            out = encoder.encode(encoder(), torch.randn(2, 6))
            if out.requires_grad:
                out.sum().backward()
        assert raises_at_backward(go) is raises, decorator


def test_a_grad_off_factory_of_another_file_is_not_proven(tmp_path):
    for decorator in ("@smart_inference()", "@smart_inference(False)", "@smart_inference(mode=True)"):
        found, line = _project_proven(tmp_path, USER_FILE.replace("@inference_only()", decorator))
        assert ("IPF101", line) not in found, decorator
    found, line = _project_proven(tmp_path, USER_FILE.replace("@inference_only()", "@plain()"))
    assert ("IPF101", line) in found


# ------------------------------------------------------------------ only indices leave
# Distances written in place (the diagonal masked) are only ranked: `topk`'s values are dropped
# and its indices (integers) are all that leaves, so backward never reaches `cdist`'s node
# (alphafold3-pytorch get_indices_three_closest_atom_pos, model_utils.py:681/687).
INDICES = """\
import torch


def nearest_two(points):
    dist = torch.cdist(points, points)
    eye = torch.eye(points.shape[-2], dtype=torch.bool)
    dist.masked_fill_(eye, 1e4)
    _, nearest = (-dist).topk(2, dim=-1)
    return nearest


def nearest_two_distances(points):
    dist = torch.cdist(points, points)
    eye = torch.eye(points.shape[-2], dtype=torch.bool)
    dist.masked_fill_(eye, 1e4)
    closest, _ = (-dist).topk(2, dim=-1)
    return closest


def frame_loss(points, pick):
    if pick:
        return (-nearest_two_distances(points)).sum()
    nearest = nearest_two(points)
    return (points - points[nearest[:, 0]]).pow(2).sum()
"""
INDICES_WRITE, VALUES_WRITE = 7, 15


def test_distances_only_ranked_run_backward():
    loss = _defined(INDICES, pytest.MonkeyPatch())["frame_loss"]

    def run(pick):
        def go():
            torch.manual_seed(0)
            loss(torch.randn(5, 3, requires_grad=True), pick).backward()
        return go

    assert not raises_at_backward(run(False))
    assert raises_at_backward(run(True))  # the values kept: backward reaches cdist, which raises


def test_distances_whose_values_leave_stay_proven():
    assert ("IPF103", VALUES_WRITE) in _proven(INDICES)


def test_distances_only_ranked_are_not_proven():
    assert ("IPF103", INDICES_WRITE) not in _proven(INDICES)


# the indices taken as `.indices` leave the same way; look-alikes that stay proven: the values held
# in `_` and read after all, and `max` of another tensor (one tensor, unpacked into its rows)
INDICES_ATTRIBUTE = INDICES.replace("_, nearest = (-dist).topk(2, dim=-1)", "nearest = (-dist).topk(2, dim=-1).indices")
VALUES_READ = INDICES.replace("    return nearest\n", "    return nearest, _\n", 1).replace(
    "    nearest = nearest_two(points)\n    return (points - points[nearest[:, 0]]).pow(2).sum()",
    "    nearest, closest = nearest_two(points)\n    return closest.sum()")
ROWS = INDICES.replace("_, nearest = (-dist).topk(2, dim=-1)", "_, nearest = (-dist).max(eye.float())").replace(
    "    nearest = nearest_two(points)\n    return (points - points[nearest[:, 0]]).pow(2).sum()",
    "    return nearest_two(points).sum()")  # two points: a 2 x 2 maximum, two rows


def test_only_ranked_look_alikes_run():
    for source, raises in ((INDICES_ATTRIBUTE, False), (VALUES_READ, True), (ROWS, True)):
        loss = _defined(source, pytest.MonkeyPatch())["frame_loss"]

        def go(loss=loss, source=source):
            loss(torch.randn(2 if source is ROWS else 5, 3, requires_grad=True), False).backward()
        assert raises_at_backward(go) is raises, source


def test_only_ranked_look_alikes():
    assert ("IPF103", INDICES_WRITE) not in _proven(INDICES_ATTRIBUTE)
    assert ("IPF103", INDICES_WRITE) in _proven(VALUES_READ)
    assert ("IPF103", INDICES_WRITE) in _proven(ROWS)


def test_a_factory_turned_pass_through_changes_the_importers_cache_key(tmp_path):
    """user.py's result depends on whether helpers.py's factory turns grad off: its cache key
    (``digest_for``) names that fact, so an edit of the factory alone is a miss for the user."""
    from codemod.engine.project import build_index

    user = USER_FILE.replace("@inference_only()", "@smart_inference()")
    (tmp_path / "user.py").write_text(user)
    files = [str(tmp_path / "helpers.py"), str(tmp_path / "user.py")]
    keys = []
    for factory in (FACTORY_FILE, FACTORY_FILE.replace("        return (torch.inference_mode", "        return fn\n        return (torch.inference_mode")):
        (tmp_path / "helpers.py").write_text(factory)
        index = build_index(files)
        keys.append(index.digest_for("user"))
        found = process_source(user.encode(), files[1], Settings(select=("IPF1",)), project=index, module_name="user")
        keys.append(bool(found.findings))
    assert keys[1] is False and keys[3] is True  # the label: the pass-through proves the write again
    assert keys[0] != keys[2]
