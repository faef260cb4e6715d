"""uni2ts 2.0.0 (Moirai): the one proven finding of `inplacefix check` on main e0a91e4 (stop 50, prec50b):
`PackedStdScaler._get_loc_scale` (module/packed_scaler.py) takes `scale = torch.sqrt(var + self.minimum_scale)`
(line 119, sqrt saves its output) then writes `scale[sample_id == 0] = 1` (line 121: the padding positions).
Sources: the unpacked wheel under $PREC50B_SITE (default /work/tmp/prec50b/pk), imported as they are; einops and
jaxtyping (+ wadler_lindig) from $PREC50B_DEPS (default /work/tmp/prec50b/deps, `pip download --no-deps`
unzipped). The path: PackedStdScaler()(target requiring grad, observed_mask, sample_id with padding (0) and two
packed series), backward through loc and scale: raises (output of Sqrt modified). Control: line 121 out of place
(`scale = scale.masked_fill(sample_id.unsqueeze(-1) == 0, 1)`, the rest of the method as shipped, recompiled):
runs. Context: Moirai scales the data (`self.scaler(target, ...)` in MoiraiModule.forward), which does not
require grad: real by this file's convention (an input requiring grad raises); the library's own use keeps grad
off."""

import _shim  # noqa: F401
import ast
import os
import sys

import torch
from _check import attempt, expect_line

sys.path[:0] = [os.environ.get("PREC50B_SITE", "/work/tmp/prec50b/pk"),
                os.environ.get("PREC50B_DEPS", "/work/tmp/prec50b/deps")]
from uni2ts.module import packed_scaler  # noqa: E402

Scaler = packed_scaler.PackedStdScaler
expect_line(Scaler._get_loc_scale, 119, "scale = torch.sqrt(var + self.minimum_scale)")
expect_line(Scaler._get_loc_scale, 121, "scale[sample_id == 0] = 1")
FINDING = "uni2ts/module/packed_scaler.py:121:IPF104"


def out_of_place():
    """_get_loc_scale with line 121 as `scale = scale.masked_fill(sample_id.unsqueeze(-1) == 0, 1)`."""
    path = packed_scaler.__file__
    cls = next(n for n in ast.parse(open(path).read(), path).body
               if isinstance(n, ast.ClassDef) and n.name == "PackedStdScaler")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "_get_loc_scale")
    i = next(i for i, s in enumerate(fn.body) if s.lineno == 121)
    new = ast.parse("scale = scale.masked_fill(sample_id.unsqueeze(-1) == 0, 1)").body[0]
    fn.body[i] = ast.fix_missing_locations(ast.copy_location(new, fn.body[i]))
    ns = dict(vars(packed_scaler))
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), ns)
    return ns["_get_loc_scale"]


def run(control):
    def go():
        torch.manual_seed(0)
        scaler = Scaler()
        if control:
            scaler._get_loc_scale = out_of_place().__get__(scaler)
        target = torch.randn(2, 6, 1, requires_grad=True)
        observed = torch.ones(2, 6, 1, dtype=torch.bool)
        sample_id = torch.tensor([[1, 1, 1, 2, 2, 0], [1, 1, 1, 1, 0, 0]])
        variate_id = torch.zeros(2, 6, dtype=torch.long)
        loc, scale = scaler(target, observed, sample_id, variate_id)
        ((target - loc) / scale).pow(2).sum().backward()
    return go


attempt(FINDING, "path", "PackedStdScaler()(target requiring grad, packed sample ids with padding), backward",
        run(False))
attempt(FINDING, "control", "the same with line 121 out of place (masked_fill)", run(True))
