"""diffct-mlx 2.1.0 (diffct/geometry.py:543, :547, :550, :551 `custom_trajectory_3d`): the proven findings of
`inplacefix check` (stop 58, fresh58, end of stop). Per view, `det_v_vec[i] = torch.cross(src_unit, det_u_vec[i])`
(:550) saves the row view `det_u_vec[i]` (for src_unit's gradient), and `det_v_vec[i] = det_v_vec[i] /
torch.norm(det_v_vec[i])` (:551) saves the row view `det_v_vec[i]`. With a source path that requires grad (a learned
trajectory: diffct is a differentiable CT library, and the path is a user function):
- :547 (off-axis views) and :543 (a view on the z axis) write the next row of det_u_vec, which shares its version with
  the row the previous view's cross saved: backward raises. Each raises alone (the other det_u_vec write and the
  det_v_vec writes on fresh copies).
- :551 writes the row that its own norm and division saved: backward raises (the other writes on fresh copies).
- :550 writes the next row of det_v_vec, which the previous view's norm saved, but :551 of that view has already
  written that row after the save, so the saved row is always spoiled before :550 runs: with :551 on a fresh copy
  (or out of place), :550 as shipped runs, and with :551 as shipped the backward raises whatever :550 is. :550 cannot
  make a run raise that does not raise without it. False (saver-already-spoiled: fresh58_probes.py).
The path is real by this file's convention (a source path that requires grad; the library's own trajectories are
built from angles without grad). The function is compiled alone from the shipped file."""

import _shim  # noqa: F401
import linecache
import math
import warnings

import torch
from _check import attempt
from _fresh53 import compile_alone, src

warnings.simplefilter("ignore")
PATH = src("diffct/geometry.py")
TEXT = {543: "det_u_vec[i] = torch.tensor([1.0, 0.0, 0.0], device=device, dtype=dtype)",
        547: "det_u_vec[i] = u_unnorm / torch.norm(u_unnorm)",
        550: "det_v_vec[i] = torch.cross(src_unit, det_u_vec[i])",
        551: "det_v_vec[i] = det_v_vec[i] / torch.norm(det_v_vec[i])"}
for n, text in TEXT.items():
    assert linecache.getline(PATH, n).strip() == text, n
FRESH = {543: "v = torch.tensor([1.0, 0.0, 0.0], device=device, dtype=dtype); det_u_vec = det_u_vec.clone(); det_u_vec[i] = v",
         547: "v = u_unnorm / torch.norm(u_unnorm); det_u_vec = det_u_vec.clone(); det_u_vec[i] = v",
         550: "v = torch.cross(src_unit, det_u_vec[i]); det_v_vec = det_v_vec.clone(); det_v_vec[i] = v",
         551: "v = det_v_vec[i] / torch.norm(det_v_vec[i]); det_v_vec = det_v_vec.clone(); det_v_vec[i] = v"}


def run(shipped):
    replace = {n: code for n, code in FRESH.items() if n not in shipped}
    ns = compile_alone(PATH, {"custom_trajectory_3d"}, {"torch": torch, "math": math}, replace=replace)

    def go():
        scale = torch.tensor([1.0, 1.0, 1.0], requires_grad=True)  # a learned trajectory

        def path(angles, sid):
            pos = torch.stack([-sid * torch.sin(angles), sid * torch.cos(angles), 50 * torch.sin(2 * angles)], -1)
            pos = pos.clone()
            pos[2, :2] = 0.0  # the third view on the z axis (:543)
            return pos * scale

        src_pos, det_center, det_u, det_v = ns["custom_trajectory_3d"](4, 1000.0, 1500.0, path, 0.3, "cpu")
        (det_center.sum() + det_v.sum()).backward()
        assert scale.grad is not None
    return go


for n in (543, 547, 551):
    fid = f"diffct/geometry.py:{n}:IPF104"
    attempt(fid, "path", f"custom_trajectory_3d(4 views, a source path that requires grad, the third view on the z "
            f"axis), :{n} as shipped, the other writes on fresh copies: backward raises", run({n}))
attempt("diffct/geometry.py:550:IPF104", "path", "the same, :550 as shipped, the other writes (:551 too) on fresh "
        "copies: the norm's saved row was of the tensor :551 copied away from: runs", run({550}))
attempt("diffct/geometry.py:550:IPF104", "context", "the same, :550 and :551 as shipped: raises, for :551's write",
        run({550, 551}))
attempt("diffct/geometry.py:550:IPF104", "context", "the same, :551 as shipped and :550 on a fresh copy: raises all "
        "the same (:550 adds nothing)", run({551}))
for n in (543, 547, 550, 551):
    attempt(f"diffct/geometry.py:{n}:IPF104", "control", "all four writes on fresh copies: runs", run(set()))
