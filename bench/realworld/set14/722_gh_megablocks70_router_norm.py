# source: https://github.com/databricks/megablocks/pull/70
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# megablocks PR #70 "Change router weight norm from in-place" (merged, commit 46567ec): with
# moe_normalize_expert_weights set, training fails in backward ("one of the variables needed for gradient
# computation has been modified by an inplace operation: [torch.cuda.FloatTensor [8192, 2]] ...") because
# LearnedRouter.forward normalises the top-k weights with `expert_weights /= torch.norm(expert_weights, ...)`:
# the norm's backward saved that topk output (it needs its input and its result).
# Fix (PR): `expert_weights = expert_weights / torch.norm(expert_weights, ...)`.
# The culprit lives in the library module 722helpers_megablocks_router.py (ref: 722helpers_megablocks_router_fixed.py).
# Stand-ins: Arguments reduced to the router's fields (fp16 off, cpu); instead of megablocks' sparse MoE MLP, a dense
# stand-in that gathers the chosen experts' linear maps and mixes them with expert_weights (what dMoE does with
# the router outputs), plus megablocks-style load-balancing term on `scores`. top_k=2 as in the report ([N, 2]).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
router = importlib.import_module("722helpers_megablocks_router")


def compute():
    torch.manual_seed(0)
    args = router.Arguments(hidden_size=8, moe_num_experts=4, moe_top_k=2, moe_normalize_expert_weights=1,
                            moe_jitter_eps=0.01)
    r = router.LearnedRouter(args)
    experts = torch.nn.Parameter(torch.randn(args.moe_num_experts, args.hidden_size, args.hidden_size) * 0.1)
    x = torch.randn(2, 5, args.hidden_size)
    target = torch.randn(2 * 5, args.hidden_size)

    scores, expert_weights, expert_indices = r(x)
    tokens = x.view(-1, args.hidden_size)
    # dense stand-in for the expert computation: y = sum_k w_k * (x @ W_{e_k})
    w_sel = experts[expert_indices]                                  # [N, k, h, h]
    expert_out = torch.einsum("nh,nkhd->nkd", tokens, w_sel)
    y = (expert_weights.unsqueeze(-1) * expert_out).sum(1)
    lbl = (scores.mean(0) * scores.mean(0)).sum() * args.moe_num_experts
    loss = ((y - target) ** 2).mean() + 0.1 * lbl
    loss.backward()
    return {
        "loss": loss.detach(),
        "grad_router": r.layer.weight.grad.detach().clone(),
        "grad_experts": experts.grad.detach().clone(),
        "expert_weights": expert_weights.detach().clone(),
    }
