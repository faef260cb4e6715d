"""fairchem-core (EScAIP / AllScAIP radius graphs): the two proven findings of `inplacefix check` on main d1b4fd6
(stop 51, prec51b): `build_radius_graph(...)` with the default hard ranking takes
`env = torch.amax(torch.stack([src_ranks / k, dst_ranks / k, dist / cutoff]), dim=0)` (amax saves its input and
output) then zeroes the self-loops in place, `env.masked_fill_(dist == 0.0, 0.0)`
(escaip/utils/radius_graph.py:245, allscaip/utils/allscaip_radius_graph.py:570); env is returned (the
envelope of the neighbours). fairchem's package import needs more than torch: escaip/utils/radius_graph.py
(torch only) is loaded from its file; allscaip's build_radius_graph is compiled alone with escaip's helpers
(hard_rank, safe_norm, soft_rank, as its import names them). The compiled functions run eager: their
decorators (escaip's `@torch.jit.script`-style ones, which compile from the file's text) are dropped, in the path
and the control alike. Path: positions requiring grad (forces by
autograd), build_radius_graph(pos, cell, image_id = the one image, cutoff, 0, cpu, k=3), backward through env:
raises (output of amax modified). Control: the write out of place (`env = env.masked_fill(dist == 0.0, 0.0)`):
runs. Context: soft=True (the other arm, logsumexp): whether it raises there is not asked here. Whether
EScAIP's own forward differentiates env with grad on (direct-force models with positions requiring grad) was
not traced: real by this file's convention (an input requiring grad raises)."""

import _shim  # noqa: F401
import importlib.util
import linecache
import os
import sys
import warnings

import torch
from _check import attempt
from _prec51b import PK2, compile_alone

ES = os.path.join(PK2, "fairchem/core/models/escaip/utils/radius_graph.py")
AS = os.path.join(PK2, "fairchem/core/models/allscaip/utils/allscaip_radius_graph.py")
for path, line in ((ES, 245), (AS, 570)):
    assert "env.masked_fill_(dist == 0.0, 0.0)" in linecache.getline(path, line), (path, line)

_spec = importlib.util.spec_from_file_location("escaip_radius_graph", ES)
es = importlib.util.module_from_spec(_spec)
sys.modules["escaip_radius_graph"] = es
_spec.loader.exec_module(es)


def build(path, line, control):
    base = {n: getattr(es, n) for n in ("hard_rank", "safe_norm", "soft_rank", "soft_rank_low_mem")
            if hasattr(es, n)}
    base.update(torch=torch, warnings=warnings)
    tree_names = {"build_radius_graph", "segment_argsort", "compute_soft_ranks_single_segment",
                  "segment_argsort_vectorized", "bump_function", "soft_rank_low_mem",
                  "build_radius_graph_chunked"} if path == AS else {"build_radius_graph"}
    if path == ES:
        base = dict(vars(es))
    ns = compile_alone(path, tree_names, base,
                       replace={line: "env = env.masked_fill(dist == 0.0, 0.0)"} if control else None,
                       undecorate=True)
    return ns["build_radius_graph"]


def run(path, line, control):
    def go():
        fn = build(path, line, control)
        torch.manual_seed(0)
        pos = (torch.rand(5, 3) * 3).requires_grad_()
        cell = torch.eye(3) * 10
        image_id = torch.zeros(1, 3)
        out = fn(pos, cell, image_id, 6.0, 0, torch.device("cpu"), k=3)
        env = out[5]
        assert env.requires_grad
        env.sum().backward()
    return go


for path, line, rel in ((ES, 245, "fairchem/core/models/escaip/utils/radius_graph.py"),
                        (AS, 570, "fairchem/core/models/allscaip/utils/allscaip_radius_graph.py")):
    finding = f"{rel}:{line}:IPF103"
    attempt(finding, "path", "build_radius_graph(positions requiring grad, one image, k=3), backward through env",
            run(path, line, False))
    attempt(finding, "control", f"line {line} out of place (masked_fill)", run(path, line, True))
