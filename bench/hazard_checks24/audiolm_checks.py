"""audiolm-pytorch 2.4.0: the two proven findings of `inplacefix check` (main at ec70a2c, stop 36):
`FineTransformer.forward` writes `rel_dist_seq_pos += max_seq_len - 1` and
`rel_dist_seq_offset += num_offsets - 1` (`audiolm_pytorch/audiolm_pytorch.py:1277/1278`) into
outputs of `rel_dist.unbind(dim = -1)`; PyTorch refuses such a write when the tensor viewed (or
the value written) requires grad. `rel_dist` holds relative positions built from `torch.arange`
(integers) only. The path runs the forward's own statements that build them (lines 1190-1201 and
the `if exists(self.pos_bias_mlp):` block, 1229-1299, from the installed source, line numbers
kept) with the layer's position MLP and null bias requiring grad, then backward through the
attention bias; the context the same with `rel_dist` made a float that requires grad (the write
is then refused), showing what the label turns on.

The package imports need beartype, local_attention, ema_pytorch and more (not installed here); the
statements checked use only torch and einops, so they are run from the installed file's source."""

import ast
import importlib.util
import types

import _shim  # noqa: F401
import einops
import torch
import torch.nn.functional as F
from _check import attempt
from torch import nn

PATH = str(importlib.util.find_spec("audiolm_pytorch").submodule_search_locations[0]) + "/audiolm_pytorch.py"
POS = "audiolm_pytorch/audiolm_pytorch.py:1277:IPF106"
OFFSET = "audiolm_pytorch/audiolm_pytorch.py:1278:IPF106"
REL_DIST = "rel_dist = (rearrange(pos_mlp_input, 'i c -> i 1 c') - rearrange(pos_mlp_input, 'j c -> 1 j c'))"


def block(edits=()):
    """The forward's statements at lines 1190-1201 and the position-bias block, as a function of
    (self, coarse_token_ids, fine_token_ids, device) returning the attention bias."""
    with open(PATH, encoding="utf-8") as handle:
        source = handle.read()
    lines = source.splitlines()
    assert lines[1276].strip() == "rel_dist_seq_pos += max_seq_len - 1", lines[1276]
    assert lines[1277].strip() == "rel_dist_seq_offset += num_offsets - 1", lines[1277]
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    tree = ast.parse(source, PATH)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "FineTransformer")
    forward = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    kept = [s for s in forward.body if 1190 <= s.lineno <= 1201 or s.lineno == 1229]
    assert kept[-1].lineno == 1229 and isinstance(kept[-1], ast.If)
    kept.append(ast.Return(value=ast.Name("attn_bias", ast.Load()), lineno=1300, col_offset=8, end_lineno=1300, end_col_offset=24))
    args = ast.arguments(posonlyargs=[], args=[ast.arg(a) for a in ("self", "coarse_token_ids", "fine_token_ids",
                                                                    "device")],
                         kwonlyargs=[], kw_defaults=[], defaults=[])
    func = ast.FunctionDef(name="position_bias", args=args, body=kept, decorator_list=[], lineno=1136, col_offset=4,
                           end_lineno=1300, end_col_offset=0)
    module = ast.fix_missing_locations(ast.Module(body=[func], type_ignores=[]))
    namespace = {"torch": torch, "F": F, "repeat": einops.repeat, "rearrange": einops.rearrange,
                 "exists": lambda v: v is not None, "ceil_div": lambda n, d: (n + d - 1) // d}
    exec(compile(module, PATH, "exec"), namespace)
    return namespace["position_bias"]


def layer():
    torch.manual_seed(0)
    heads, dim = 2, 8
    return types.SimpleNamespace(
        num_coarse_quantizers=2, num_fine_quantizers=3, codebook_size=16,
        pos_bias_mlp=nn.Sequential(nn.Linear(2, dim), nn.SiLU(), nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, heads)),
        null_pos_bias=nn.Parameter(torch.randn(heads, 1, 1)))


def bias(edits=()):
    def run():
        position_bias = block(edits)
        coarse, fine = torch.randint(0, 16, (1, 4)), torch.randint(0, 16, (1, 6))
        position_bias(layer(), coarse, fine, torch.device("cpu")).sum().backward()
    return run


FLOAT_GRAD = [(REL_DIST, REL_DIST[:-1] + ").float().requires_grad_()")]
attempt(POS, "path", "the forward's position bias (lines 1190-1201, 1229-1299), its MLP and null bias requiring "
        "grad, backward", bias())
attempt(POS, "context", "the same with rel_dist a float requiring grad: the write into unbind's output is refused",
        bias(FLOAT_GRAD))
attempt(OFFSET, "path", "as :1277 (line 1278 runs right after it)", bias())
