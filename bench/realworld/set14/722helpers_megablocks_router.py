# helper for case 722: megablocks/layers/router.py (databricks/megablocks, parent of commit 46567ec), verbatim
# except the imports: megablocks.layers.common.dtype and megablocks.layers.arguments.Arguments are inlined below
# as stand-ins (Arguments reduced to the fields the router reads; fp16 off and device cpu for the CPU harness).
import dataclasses
from functools import partial
from typing import Callable, Optional, Union

import torch


# ---- stand-in: megablocks.layers.arguments.Arguments (router fields only) ----
@dataclasses.dataclass
class Arguments:
    hidden_size: int = 1024
    moe_num_experts: int = 1
    moe_top_k: int = 1
    moe_normalize_expert_weights: Optional[Union[int, float]] = None
    moe_jitter_eps: Optional[float] = None
    fp16: bool = False
    bf16: bool = False
    device: torch.device = "cpu"
    init_method: Callable = partial(torch.nn.init.normal_, mean=0.0, std=0.02)
    uniform_expert_assignment: bool = False


# ---- stand-in: megablocks.layers.common ----
class common:
    @staticmethod
    def dtype(args: Arguments):
        if args.fp16:
            return torch.float16
        elif args.bf16:
            return torch.bfloat16
        return None


# NOTE: To enable end-to-end benchmarking without convergence we
# support a flag to force the router to assign tokens uniformly
# across the experts. We do this with a custom autograd operation
# so that PyTorch still executes the full set of router operation.
class _UniformExpertAssignment(torch.autograd.Function):


    @staticmethod
    def forward(ctx, x, num_experts):
        out = torch.arange(x.numel(), dtype=x.dtype, device=x.device)
        out = torch.remainder(out, num_experts)
        return out.view(x.shape)
_uniform_expert_assignment = _UniformExpertAssignment.apply


class LearnedRouter(torch.nn.Module):

    def __init__(self, args : Arguments):
        super().__init__()
        self.args = args

        # Learned router parameters.
        #
        # NOTE: This weight matrix is not parallelized with expert model
        # parallelism. Each device needs the entire router weight matrix
        # so that it can route its batch of data correctly.
        self.layer = torch.nn.Linear(
            args.hidden_size,
            args.moe_num_experts,
            bias=False,
            dtype=common.dtype(args),
            device=args.device)
        args.init_method(self.layer.weight)

    def jitter(self, x):
        low = 1.0 - self.args.moe_jitter_eps
        high = 1.0 + self.args.moe_jitter_eps
        noise = torch.rand(x.size(), dtype=x.dtype, device=x.device)
        return low + noise * (high - low)

    def _top_k(self, scores):
        if self.args.moe_top_k == 1:
            return scores.max(dim=-1)
        return torch.topk(scores, self.args.moe_top_k, dim=-1)


    def forward(self, x):
        if self.training and self.args.moe_jitter_eps is not None:
            x = x * self.jitter(x)

        scores = self.layer(x.view(-1, x.shape[-1])).softmax(dim=-1)
        expert_weights, expert_indices = self._top_k(scores)
        if self.args.moe_normalize_expert_weights:
            expert_weights /= torch.norm(
                expert_weights, p=self.args.moe_normalize_expert_weights,dim=-1, keepdim=True)

        expert_indices = (
            _uniform_expert_assignment(expert_indices, self.args.moe_num_experts)
            if self.args.uniform_expert_assignment else expert_indices
        )
        return scores, expert_weights, expert_indices
