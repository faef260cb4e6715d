"""torchgeo 0.8.1: the two proven findings of `inplacefix check` (eafcde2, stop 47).

- models/ltae.py:98 (IPF102): `LTAE` ends its MLP with `nn.ReLU(inplace=True)` and applies
  `self.dropout = nn.Dropout(dropout, inplace=True)` (line 98) to the MLP's output (line 124):
  ReLU saved its result, which the in-place dropout overwrites. ltae.py imports only torch and is
  loaded alone (`import torchgeo` needs PIL, timm, kornia, rasterio, lightning and more). Path: LTAE
  in training mode on a series requiring grad, backward; control: the same model with the dropout
  switched to out of place (`inplace = False`).
- models/panopticon.py:167 (IPF101): `ChnAttn.forward` writes `x += chn_embs.unsqueeze(2)` into
  its argument, which `PanopticonPE.forward` unpacks from `x, _, _ = self.conv3d(x)` (line 64):
  `Conv3dWrapper.forward` returns a Python tuple `(x.flatten(-2).permute(0, 2, 3, 1), hp, wp)`,
  a view of the convolution's output, not an output of a multi-output autograd function, so
  PyTorch lets it be modified in place. `Conv3dWrapper` and `ChnAttn.forward` run from the
  installed file's source (`functions_from`; `_to_tuple` given), ChnAttn.forward with a stand-in
  `self` (its channel embedding an nn.Embedding) stopped right after line 167; backward from `x`.
  It runs: false (group tuple-return-taken-for-multi-output-view)."""

import _shim  # noqa: F401

import ast
import importlib.util
import types

import torch
from torch import nn
from _check import attempt, expect_line, run_through

ROOT = importlib.util.find_spec("torchgeo").submodule_search_locations[0]

spec = importlib.util.spec_from_file_location("torchgeo_ltae", ROOT + "/models/ltae.py")
ltae = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ltae)
expect_line(ltae.LTAE.__init__, 98, "self.dropout = nn.Dropout(dropout, inplace=True)")
expect_line(ltae.LTAE.forward, 124, "output: Tensor = self.outlayernorm(self.dropout(self.mlp(mlp_input)))")
FINDING = "torchgeo/models/ltae.py:98:IPF102"


def run_ltae(inplace_dropout):
    torch.manual_seed(0)
    model = ltae.LTAE(in_channels=16, n_head=4, n_neurons=[16, 8], dropout=0.2, len_max_seq=6, d_model=None).train()
    model.dropout.inplace = inplace_dropout
    x = torch.randn(3, 6, 16, requires_grad=True)
    model(x).sum().backward()


attempt(FINDING, "path", "LTAE (training mode, dropout 0.2) on x requiring grad, backward", lambda: run_ltae(True))
attempt(FINDING, "control", "the same LTAE with its dropout out of place", lambda: run_ltae(False))

PATH = ROOT + "/models/panopticon.py"
with open(PATH, encoding="utf-8") as handle:
    tree = ast.parse(handle.read(), PATH)
kept = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Conv3dWrapper"]
kept += [m for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ChnAttn"
         for m in n.body if isinstance(m, ast.FunctionDef) and m.name == "forward"]
ns = {"torch": torch, "nn": nn, "Tensor": torch.Tensor, "Any": object,
      "_to_tuple": lambda value: value if isinstance(value, tuple) else (value, value)}
exec(compile(ast.Module(body=kept, type_ignores=[]), PATH, "exec"), ns)
chn_forward = ns["forward"]
expect_line(chn_forward, 167, "x += chn_embs.unsqueeze(2)")
FINDING = "torchgeo/models/panopticon.py:167:IPF101"


def run_panopticon():
    torch.manual_seed(0)
    wrapper = ns["Conv3dWrapper"](patch_size=4, embed_dim=8)
    imgs = torch.randn(2, 3, 8, 8, requires_grad=True)
    x, _, _ = wrapper(imgs)  # PanopticonPE.forward, line 64
    fake = types.SimpleNamespace(chnemb=nn.Embedding(5, 8))
    local = run_through(chn_forward, 167, fake, x, torch.tensor([[0, 1, 2], [2, 3, 4]]))
    local["x"].sum().backward()
    assert imgs.grad is not None


attempt(FINDING, "path", "Conv3dWrapper on images requiring grad, then ChnAttn.forward through line 167, backward",
        run_panopticon)
