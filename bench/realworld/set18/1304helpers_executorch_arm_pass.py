# backends/arm/_passes/replace_inf_and_limit_values_pass.py of executorch as of the parent of commit 17ff2328be
# (PR #17901): ReplaceInfAndLimitValuesPass (the culprit: `tensor[tensor == float("inf")] = 255` on each floating
# buffer of the graph module, in place).
# Stand-ins: ArmPass / ExportPass are reduced to the base below (`allowed_to_transform` always true: no TOSA spec
# restrictions), NodeMetadata to the node's meta dict, PassResult to a named tuple.
from typing import NamedTuple

import torch


class PassResult(NamedTuple):
    graph_module: torch.fx.GraphModule
    modified: bool


class ArmPass:
    def allowed_to_transform(self, meta) -> bool:
        return True

    def __call__(self, graph_module):
        return self.call(graph_module)


class ReplaceInfAndLimitValuesPass(ArmPass):
    """Rewrites +inf/-inf and floating-point limit values (e.g.,
    torch.finfo(...).min/max) to quantization-friendly values (±255 by default),
    improving quantizer stability (notably for attention mask paths).
    """

    def _allowed_to_transform_named_buffer(self, buf_name, graph_module) -> bool:
        attr_nodes = [
            node
            for node in graph_module.graph.nodes
            if node.op == "get_attr" and node.target == buf_name
        ]

        can_transform_buffer = True
        for attr_node in attr_nodes:
            for user in list(attr_node.users):
                if user.op != "call_function":
                    continue
                if not self.allowed_to_transform(user.meta):
                    can_transform_buffer = False
                    break
            if not can_transform_buffer:
                break

        return can_transform_buffer

    def call(self, graph_module: torch.fx.GraphModule):
        modified = False
        for buf_name, tensor in graph_module.named_buffers():
            if not tensor.is_floating_point():
                continue
            if not self._allowed_to_transform_named_buffer(buf_name, graph_module):
                continue

            modified = True
            # 255 here is mainly for attention_mask in Llama for reasonable quant scale
            tensor[tensor == float("inf")] = 255
            tensor[tensor == float("-inf")] = -255
            setattr(graph_module, buf_name, tensor)

        for node in graph_module.graph.nodes:
            arg_list = list(node.args)
            for index, arg in enumerate(arg_list):
                if arg == float("-inf") or arg == torch.finfo(torch.float32).min:
                    modified = True
                    arg_list[index] = -255.0
                elif arg == float("inf") or arg == torch.finfo(torch.float32).max:
                    modified = True
                    arg_list[index] = +255.0
            node.args = tuple(arg_list)

        if modified:
            graph_module.recompile()
        return PassResult(graph_module, modified)
