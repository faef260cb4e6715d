"""rl4co 0.7.0: the eight proven findings of `inplacefix check` on main 97a004a (stop 52, fresh52).
rl4co's imports (tensordict, torchrl, lightning) are not met here, so each flagged method is compiled alone
from the shipped file (`_fresh52.compile_alone`: ast, line numbers kept; the class's bases swapped for
`object`/`nn.Module`); a TensorDict is a dict stand-in. Statements are replaced by line for controls
(out of place, or the saved tensor cloned) and to stop after the flagged line (`return locals()`).

- mpdp/env.py:170, :177 (`MPDPEnv._reset`): `distance = torch.cdist(...)` (cdist saves its output), then
  `distance[:, 0, a:b] = ...` (:170) and, through the view `depot_distance = distance[:, 0, :]`, :177.
  Locations requiring grad: real by this file's convention (rl4co's generators sample them without grad).
- mtvrp/baselines/utils.py:18 (`process_instance`): `cost_mat = torch.cdist(...)`, then the diagonal zeroed.
- pdp/generator.py:131, :132 and tsp/generator.py:87 (`_get_initial_solutions`, greedy): `dists =
  (d1 - d2).norm(p=2, dim=2)` (norm saves its output), then written; but dists only feeds
  `dists.min(-1)[1]`, an int64 index: nothing differentiable leaves, no backward can reach norm. False.
- models/nn/env_embeddings/init.py:328 (`MDPPInitEmbedding.forward`): `dist[~probes] = inf` on cdist's output,
  then `torch.min(dist, dim=1)` feeds the embedding: raises with locations requiring grad.
- models/zoo/ptrnet/decoder.py:89 (`Decoder.recurrence`, `mask_logits=False`, a constructor option that
  PointerNetworkPolicy passes through): `log_p[~logit_mask] = -inf` on log_softmax's output: raises with
  the module's own parameters (grad on), any input."""

import _shim  # noqa: F401
import linecache
import types
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Uniform
from _check import attempt
from _fresh52 import compile_alone, src

MPDP = src("rl4co/envs/routing/mpdp/env.py")
UTILS = src("rl4co/envs/routing/mtvrp/baselines/utils.py")
PDPG = src("rl4co/envs/routing/pdp/generator.py")
TSPG = src("rl4co/envs/routing/tsp/generator.py")
INIT = src("rl4co/models/nn/env_embeddings/init.py")
PTR = src("rl4co/models/zoo/ptrnet/decoder.py")


def line(path, n):
    return linecache.getline(path, n).strip()


assert line(MPDP, 152) == "distance = torch.cdist(whole_instance, whole_instance, p=2)"
assert line(MPDP, 170) == "distance[:, 0, agent_num + 1 : agent_num + 1 + left_request] = ("
assert line(MPDP, 176) == "depot_distance = distance[:, 0, :]"
assert line(MPDP, 177) == "depot_distance[:, agent_num + 1 : agent_num + 1 + left_request] = depot_distance["
assert line(MPDP, 181) == "batch_size, n_loc, _ = loc.size()"
assert line(UTILS, 18) == "cost_mat[:, torch.arange(num_loc), torch.arange(num_loc)] = 0"
assert line(PDPG, 130) == "dists = (d1 - d2).norm(p=2, dim=2)"
assert line(PDPG, 131) == "dists.scatter_(1, selected_node, 1e6)"
assert line(PDPG, 132) == "dists[~candidates] = 1e6"
assert line(PDPG, 133) == "next_selected_node = dists.min(-1)[1].view(-1, 1)"
assert line(TSPG, 86) == "dists = (d1 - d2).norm(p=2, dim=2)"
assert line(TSPG, 87) == "dists[~candidates] = 1e5"
assert line(TSPG, 89) == "next_selected_node = dists.min(-1)[1].view(-1, 1)"
assert line(INIT, 328) == 'dist[~probes] = float("inf")'
assert line(PTR, 89) == 'log_p[~logit_mask] = float("-inf")'


class TD(dict):
    """The few TensorDict calls these functions make."""
    device = torch.device("cpu")
    batch_size = None

    def clone(self):
        out = TD({k: v.clone() for k, v in self.items()})
        out.batch_size = self.batch_size
        return out

    def cpu(self):
        return self

    def set(self, key, value):
        self[key] = value


STUBS = {"torch": torch, "nn": nn, "F": F, "TensorDict": TD, "RL4COEnvBase": object, "Generator": object,
         "MPDPGenerator": object, "Callable": Callable, "Uniform": Uniform, "get_sampler": None}

# --- mpdp/env.py:170, :177 ---
OUT170 = ("distance = distance.clone()\n"
          "distance[:, 0, agent_num + 1 : agent_num + 1 + left_request] = ("
          "distance[:, 0, agent_num + 1 : agent_num + 1 + left_request] + distance[:, 0, agent_num + 1 + left_request :])")


def mpdp_run(replace, keys=("add_pd_distance", "remain_pickup_max_distance", "remain_delivery_max_distance",
                             "depot_distance")):
    def go():
        ns = compile_alone(MPDP, {"MPDPEnv"}, dict(STUBS), replace={181: "return locals()", **replace},
                           bases={"MPDPEnv": ["object"]})
        depot = torch.rand(3, 1, 2, requires_grad=True)
        locs = torch.rand(3, 6, 2, requires_grad=True)
        out = ns["MPDPEnv"]._reset(None, TD(depot=depot, locs=locs), agent_num=2)
        loss = sum(out[k].sum() for k in keys)
        loss.backward()
    return go


F170, F177 = "rl4co/envs/routing/mpdp/env.py:170:IPF104", "rl4co/envs/routing/mpdp/env.py:177:IPF104"
attempt(F170, "path", "_reset(depot, locs requiring grad, agent_num=2), line 177 skipped, stopped before the "
        "TensorDict (line 181), backward of the distances", mpdp_run({177: "pass"}))
attempt(F170, "path", "as shipped (both writes), stopped at line 181, backward", mpdp_run({}))
attempt(F170, "path", "line 177 skipped, backward of the two max distances only (max saves no values: the node that "
        "finds its saved tensor written is cdist's)", mpdp_run({177: "pass"}, ("remain_pickup_max_distance",
                                                                           "remain_delivery_max_distance")))
attempt(F170, "control", "line 170 on a clone of distance, 177 skipped", mpdp_run({170: OUT170, 177: "pass"}))
attempt(F177, "path", "line 170 skipped (`pass`), the write through depot_distance (a view of cdist's output)",
        mpdp_run({170: "pass"}))
attempt(F177, "path", "line 170 skipped, backward of depot_distance only (cdist's node)",
        mpdp_run({170: "pass"}, ("depot_distance",)))
attempt(F177, "control", "line 170 skipped, line 176 as `distance[:, 0, :].clone()`",
        mpdp_run({170: "pass", 176: "depot_distance = distance[:, 0, :].clone()"}))

# --- mtvrp/baselines/utils.py:18 ---


def utils_run(replace):
    def go():
        ns = compile_alone(UTILS, {"process_instance"}, dict(STUBS), replace=replace)
        td = TD(locs=torch.rand(2, 5, 2, requires_grad=True), service_time=torch.zeros(2, 5))
        td.batch_size = torch.Size([2])
        out = ns["process_instance"](td)
        out["cost_matrix"].sum().backward()
    return go


F18 = "rl4co/envs/routing/mtvrp/baselines/utils.py:18:IPF104"
attempt(F18, "path", "process_instance(locs requiring grad), backward of cost_matrix", utils_run({}))
attempt(F18, "control", "line 18 on a clone of cost_mat",
        utils_run({18: "cost_mat = cost_mat.clone()\ncost_mat[:, torch.arange(num_loc), torch.arange(num_loc)] = 0"}))

# --- pdp/generator.py:131, :132; tsp/generator.py:87 (greedy initial solutions) ---


def init_sol_run(path, cls, n, replace, context=False):
    def go():
        ns = compile_alone(path, {cls}, dict(STUBS), replace=replace, bases={cls: ["object"]})
        me = types.SimpleNamespace(num_loc=n, init_sol_type="greedy")
        coords = torch.rand(3, n + 1 if cls == "PDPGenerator" else n, 2, requires_grad=True)
        rec = getattr(ns[cls], "_get_initial_solutions")(me, coords)
        assert rec.dtype == torch.int64 and not rec.requires_grad
        if not context:
            # everything the function hands back is an index: no graph leaves it; run the backward of the
            # coordinates' own use to show that nothing the function touched is in the way
            (coords * 2).sum().backward()
    return go


BACK = "dists.min(-1)[0].sum().backward(retain_graph=True)"
F131, F132 = "rl4co/envs/routing/pdp/generator.py:131:IPF103", "rl4co/envs/routing/pdp/generator.py:132:IPF104"
F87 = "rl4co/envs/routing/tsp/generator.py:87:IPF104"
attempt(F131, "path", "PDPGenerator._get_initial_solutions(coordinates requiring grad), greedy, n=6: returns an "
        "int64 tour; backward", init_sol_run(PDPG, "PDPGenerator", 6, {}))
attempt(F131, "context", "line 132 skipped and the min's values (not its index) backpropagated each turn: raises",
        init_sol_run(PDPG, "PDPGenerator", 6, {132: "pass", 133: "next_selected_node = dists.min(-1)[1].view(-1, 1)\n" + BACK}, True))
attempt(F132, "path", "as :131 (the same run)", init_sol_run(PDPG, "PDPGenerator", 6, {}))
attempt(F132, "context", "line 131 skipped and the min's values backpropagated each turn: raises",
        init_sol_run(PDPG, "PDPGenerator", 6, {131: "pass", 133: "next_selected_node = dists.min(-1)[1].view(-1, 1)\n" + BACK}, True))
attempt(F87, "path", "TSPGenerator._get_initial_solutions(coordinates requiring grad), greedy, n=6; backward",
        init_sol_run(TSPG, "TSPGenerator", 6, {}))
attempt(F87, "context", "the min's values backpropagated each turn: raises",
        init_sol_run(TSPG, "TSPGenerator", 6, {89: "next_selected_node = dists.min(-1)[1].view(-1, 1)\n" + BACK}, True))

# --- models/nn/env_embeddings/init.py:328 ---


def mdpp_run(replace):
    def go():
        ns = compile_alone(INIT, {"MDPPInitEmbedding"}, dict(STUBS), replace=replace)
        torch.manual_seed(0)
        m = ns["MDPPInitEmbedding"](8)
        probes = torch.zeros(2, 5, dtype=torch.bool)
        probes[:, 1] = True
        out = m({"probe": probes, "locs": torch.rand(2, 5, 2, requires_grad=True)})
        out.sum().backward()
    return go


F328 = "rl4co/models/nn/env_embeddings/init.py:328:IPF104"
attempt(F328, "path", "MDPPInitEmbedding(8) on locs requiring grad, a probe per instance, backward", mdpp_run({}))
attempt(F328, "control", "line 328 as masked_fill out of place",
        mdpp_run({328: 'dist = dist.masked_fill(~probes[..., None], float("inf"))'}))

# --- models/zoo/ptrnet/decoder.py:89 ---


def ptr_run(mask_logits, replace):
    def go():
        ns = compile_alone(PTR, {"SimpleAttention", "Decoder"}, dict(STUBS, math=__import__("math")), replace=replace)
        torch.manual_seed(0)
        dec = ns["Decoder"](embed_dim=8, hidden_dim=8, mask_logits=mask_logits)
        b, s = 2, 5
        mask = torch.ones(b, s, dtype=torch.bool)
        mask[:, 0] = False
        h_out, log_p, m = dec.recurrence(torch.randn(b, 8), (torch.zeros(b, 8), torch.zeros(b, 8)), mask, None, 0,
                                         torch.randn(s, b, 8))
        log_p[:, 1:].sum().backward()
    return go


F89 = "rl4co/models/zoo/ptrnet/decoder.py:89:IPF104"
attempt(F89, "path", "Decoder(mask_logits=False).recurrence, a masked node, backward of the open log-probs",
        ptr_run(False, {}))
attempt(F89, "control", "line 89 as masked_fill out of place",
        ptr_run(False, {89: 'log_p = log_p.masked_fill(~logit_mask, float("-inf"))'}))
attempt(F89, "context", "the default mask_logits=True (line 89 not reached) runs", ptr_run(True, {}))
