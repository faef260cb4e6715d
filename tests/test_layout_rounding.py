"""Float rounding that differs by layout is not a difference; anything bigger still is (issue 23).

A copy of a view is dense where the view was not, so a reduction over it sums in another order;
after optimizer steps the last bits of the parameters differ (measured on ``GATE`` in
``soundness_cases.py``, two calls of ten Adam steps: up to 1.9e-6 of each tensor's largest value,
16 float32 eps, on entries near zero). The comparison therefore measures a float difference against the scale of the tensor it
belongs to (its largest finite magnitude), not against each entry: ``|a - b| <= atol + rtol * scale``.
Since sound39v each entry is bounded by its own magnitude and by its own rounding noise, measured
by the rounding probes (the tests give that noise as the probes measure it). These are unit
checks of that rule; the programs (the minimal fix that now verifies, the wrong
rewrites of the same program that still do not) are ``GATE`` cases in ``soundness_cases.py``.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.compare import Tolerance, compare, compare_tensors, encode  # noqa: E402


def differences(a, b, tol=None):
    found = []
    compare_tensors(a, b, "t", tol or Tolerance(), found)
    return found


def parameters_after_steps():
    """Values of magnitude up to ~10 with entries near zero, as final parameters are."""
    g = torch.Generator().manual_seed(3)
    w = torch.randn(64, 32, generator=g) * 3.0
    w[0, :8] = torch.tensor([1e-7, -2e-7, 0.0, 3e-6, -5e-6, 1e-5, 0.0, 2e-7])
    return w


def measured_noise(w):
    """What the rounding probes measure on such parameters (sound39v): noise of a few eps of the
    tensor's large entries on the entries near zero, a few eps of their own on the others."""
    noise = w.abs() * 2.4e-7
    noise[0, :8] = 1e-6 * float(w.abs().max())
    return noise.double()


def test_noise_far_above_entries_near_zero_is_not_a_difference_where_the_probes_measured_it():
    w = parameters_after_steps()
    scale = float(w.abs().max())
    noisy = w.clone()
    noisy[0, :8] += 2e-6 * scale  # far beyond those entries' own size, 17 eps of the tensor's
    noisy[5] *= 1 + 3e-7
    assert differences(w, noisy, Tolerance(noise={"t": measured_noise(w)})) == []
    assert differences(w, noisy)  # unmeasured, each entry has only its own magnitude (sound39v)


def test_a_gradient_scaled_by_1_001_is_a_difference():
    w = parameters_after_steps()
    assert differences(w, w * 1.001)


def test_one_sign_flipped_is_a_difference():
    w = parameters_after_steps()
    flipped = w.clone()
    flipped[7, 3] = -flipped[7, 3]
    assert abs(float(w[7, 3])) > 1e-2
    assert differences(w, flipped)


def test_a_shift_of_one_hundred_thousandth_of_the_scale_is_a_difference():
    w = parameters_after_steps()
    scale = float(w.abs().max())
    moved = w.clone()
    moved[10, 10] += 2e-5 * scale
    assert differences(w, moved)


def test_the_scale_is_each_tensors_own():
    """A large tensor beside a small one (final state: a weight and a bias) does not widen the
    small one's tolerance."""
    big, small = parameters_after_steps(), torch.full((4,), 0.05)
    ref = encode({"weight": big, "bias": small})
    new = encode({"weight": big, "bias": small * 1.001})
    found = []
    compare(ref, new, "state", Tolerance(), found)
    assert [d.where for d in found] == ["state[bias]"]


def test_explicit_zero_tolerance_is_exact():
    w = parameters_after_steps()
    nudged = w.clone()
    nudged[1, 1] = torch.nextafter(nudged[1, 1], torch.tensor(float("inf")))
    assert differences(w, nudged, Tolerance(0.0, 0.0))


def test_non_finite_values_must_sit_in_the_same_places():
    w = parameters_after_steps()
    a, b = w.clone(), w.clone()
    a[2, 2], b[2, 2] = float("nan"), float("nan")
    a[3, 3], b[3, 3] = float("inf"), float("inf")
    assert differences(a, b) == []
    c = b.clone()
    c[3, 3] = float("-inf")
    assert differences(a, c)
    d = b.clone()
    d[4, 4] = float("nan")
    assert differences(a, d)


def test_script_repair_compares_its_records_at_the_same_scale(tmp_path):
    """`repair script.py` records losses, gradients and parameters after steps: same rule."""
    from codemod.runtime.script_repair import compare_records

    w = parameters_after_steps()
    noisy = w.clone()
    noisy[0, :8] += 2e-6 * float(w.abs().max())
    noisy[5] *= 1 + 3e-7  # the large entries carry their own rounding (entries both runs wrote alike set no scale)
    for name, new, expected in (("noise", noisy, 0), ("scaled", w * 1.001, 1)):
        torch.save({"param/fc.weight": w}, tmp_path / "ref.pt")
        torch.save({"param/fc.weight": new}, tmp_path / f"{name}.pt")
        found = compare_records(str(tmp_path / "ref.pt"), str(tmp_path / f"{name}.pt"),
                                {"param/fc.weight": measured_noise(w)})
        assert len(found.differences) == expected, (name, found.differences)
