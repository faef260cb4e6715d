"""alphafold3-pytorch 0.8.3: the two proven findings of `inplacefix check` (main at ec70a2c, stop
36): `get_indices_three_closest_atom_pos` (`alphafold3_pytorch/utils/model_utils.py`) writes
`atom_dist.masked_fill_(...)` (lines 681 and 687) into `torch.cdist`'s output, which cdist saves.
The distances are only ranked: `(-atom_dist).topk(2)`'s values are dropped and the function
returns integer indices, so backward never reaches cdist's node. The path runs the function with
atom positions requiring grad and a loss built from the positions it picks (as
`get_frames_from_atom_pos` uses them), then backward; the control keeps topk's values in the loss
(the same write then raises), showing what the write would break.

The package imports need environs, beartype, jaxtyping and more (not installed here); the function
checked uses only torch, einops and einx, so it is run from the installed file's own source
(`functions_from`: names and line numbers kept), with `@typecheck` as the package defines it by
default (identity: TYPECHECK unset) and the jaxtyping annotations as plain names."""

import builtins
import importlib.util

import _shim  # noqa: F401
import einops
import torch
from _check import attempt, expect_line, stop_after
from _rewrite import functions_from

PATH = str(importlib.util.find_spec("alphafold3_pytorch").submodule_search_locations[0]) + "/utils/model_utils.py"


class _Annotation:
    def __getitem__(self, item):
        return item


STAND_INS = {"typecheck": lambda fn: fn, "Float": _Annotation(), "Bool": _Annotation(), "Int": _Annotation()}
for name, value in STAND_INS.items():  # evaluated when the function is defined
    setattr(builtins, name, value)
try:
    LIB = functions_from(PATH, ["get_indices_three_closest_atom_pos"])
finally:
    for name in STAND_INS:
        delattr(builtins, name)
LIB.update(pack=einops.pack, rearrange=einops.rearrange, exists=lambda v: v is not None)
CLOSEST = LIB["get_indices_three_closest_atom_pos"]
EYE = "alphafold3_pytorch/utils/model_utils.py:681:IPF103"
PAD = "alphafold3_pytorch/utils/model_utils.py:687:IPF103"
expect_line(CLOSEST, 681, "atom_dist.masked_fill_(eye, mask_value)")
expect_line(CLOSEST, 687, "atom_dist.masked_fill_(~pair_mask, mask_value)")


def closest(masked, keep_values=False):
    def run():
        torch.manual_seed(0)
        atom_pos = torch.randn(2, 6, 3, requires_grad=True)
        mask = torch.tensor([[True] * 6, [True] * 5 + [False]]) if masked else None
        if keep_values:
            # the distances' values leave too: stop after the write, rank them, backward through them
            local = stop_after(CLOSEST, 687 if masked else 681, lambda: CLOSEST(atom_pos, mask=mask))
            values, _ = (-local["atom_dist"]).topk(2, dim=-1)
            values.sum().backward()
            return
        indices = CLOSEST(atom_pos, mask=mask).clamp(min=0)
        picked = torch.gather(atom_pos, 1, indices[..., 0:1].expand(-1, -1, 3))
        (atom_pos - picked).pow(2).sum().backward()
    return run


attempt(EYE, "path", "atom positions requiring grad, a loss from the atoms picked by the indices, backward",
        closest(False))
attempt(EYE, "context", "the same distances' topk values kept in the loss (stopped after line 681): raises",
        closest(False, keep_values=True))
attempt(PAD, "path", "with a padding mask (line 687 runs), a loss from the atoms picked, backward", closest(True))
attempt(PAD, "context", "the same distances' topk values kept in the loss (stopped after line 687): raises",
        closest(True, keep_values=True))
