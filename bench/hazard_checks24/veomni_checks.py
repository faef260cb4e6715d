"""veomni 0.1.12 (veomni/ops/kernels/gated_delta_rule/_ascend/triton/chunk_o.py:439, :445, :450 `chunk_bwd_dqkwg`):
the proven findings of `inplacefix check` (stop 54, fresh54b, end of stop). `g_diff = g_diff.clamp(-60, 60).exp()`
saves exp's output, and `g_diff[:, :, :] *= torch.tril(...)` (:439; :445 when T is not a multiple of the chunk) and
`g_diff[:, :, -1] *= m_A` (:450) write it. The function is the Ascend gated-delta-rule backward helper:
`ChunkGatedDeltaRuleFunction.backward` calls it on the saved gates (grad off unless create_graph): real by this
file's convention (gates that require grad). `chunk_bwd_dqkwg` is compiled alone from the shipped file (stand-in
`triton` with `next_power_of_2` and `cdiv`; nothing of veomni, triton or the NPU kernels imported), and each run
stops right after the flagged line (`return g_diff`), before the Triton kernel launch."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src, then

PATH = src("veomni/ops/kernels/gated_delta_rule/_ascend/triton/chunk_o.py")
TRIL = "g_diff[:, :, :] *= torch.tril(torch.ones(BT, BT), diagonal=0).to(g.device)"
LAST = "g_diff[:, :, -1] *= m_A"
assert linecache.getline(PATH, 439).strip() == TRIL
assert linecache.getline(PATH, 445).strip() == TRIL
assert linecache.getline(PATH, 450).strip() == LAST
TRITON = types.SimpleNamespace(next_power_of_2=lambda n: 1 << (n - 1).bit_length(), cdiv=lambda a, b: -(-a // b))
OUT = {"tril": "g_diff = g_diff * torch.tril(torch.ones(BT, BT), diagonal=0).to(g.device)",
       "last": "g_diff = torch.cat([g_diff[:, :, :-1], (g_diff[:, :, -1] * m_A)[:, :, None]], dim=2)"}


def run(line, T, replace):
    ns = compile_alone(PATH, {"chunk_bwd_dqkwg"}, {"torch": torch, "triton": TRITON, "Optional": None,
                                                   "Tuple": None, "prepare_chunk_indices": None}, replace=replace)

    def go():
        B, H, K, V = 1, 2, 4, 4
        q, k = torch.randn(B, T, H, K), torch.randn(B, T, H, K)
        v, do = torch.randn(B, T, H, V), torch.randn(B, T, H, V)
        g = (-torch.rand(B, T, H)).cumsum(1).requires_grad_(True)
        out = ns["chunk_bwd_dqkwg"](q, k, v, do, None, None, g=g, w=torch.randn(B, T, H, K))
        out.sum().backward()
    return go


FID = "veomni/ops/kernels/gated_delta_rule/_ascend/triton/chunk_o.py:{}:IPF104"
attempt(FID.format(439), "path", "T = 64 (a whole chunk), gates that require grad, stopped after :439: raises",
        run(439, 64, {439: then(TRIL, "return g_diff")}))
attempt(FID.format(439), "control", "the same with :439 out of place: runs",
        run(439, 64, {439: then(OUT["tril"], "return g_diff")}))
attempt(FID.format(445), "path", "T = 40 (a padded chunk), stopped after :445: raises",
        run(445, 40, {445: then(TRIL, "return g_diff")}))
attempt(FID.format(445), "control", "the same with :445 out of place: runs",
        run(445, 40, {445: then(OUT["tril"], "return g_diff")}))
attempt(FID.format(450), "path", "T = 40, :445 through .data, stopped after :450: raises",
        run(450, 40, {445: TRIL.replace("g_diff[", "g_diff.data[", 1), 450: then(LAST, "return g_diff")}))
attempt(FID.format(450), "control", "the same with :450 out of place: runs",
        run(450, 40, {445: TRIL.replace("g_diff[", "g_diff.data[", 1), 450: then(OUT["last"], "return g_diff")}))
