# Library module for case 3104 (reference: the maintainers' fix).
# automl/NASLib commit 6c93788f ("assignment to alpha by index needs to be done on its data member or using no_grad"):
# in _truncate_input_edges, `data.alpha.data[1] = -float("inf")` (the commit's `option = 2`; its `option = 1`, the same
# write under `with torch.no_grad():`, is left in the source as the alternative). Everything else is as in
# 3104helpers_naslib_darts.py (same stand-ins; see its header).
import copy
import random

import numpy as np
import torch
from torch import nn


class EdgeData(object):
    def __init__(self):
        self._private = {}
        self._shared = {}
        self._deleted = False

    def set(self, key, value, shared=False):
        (self._shared if shared else self._private)[key] = value

    def has(self, key):
        return key in self._private or key in self._shared

    def __getattr__(self, key):
        if key.startswith('_'):
            raise AttributeError(key)
        if key in self._private:
            return self._private[key]
        if key in self._shared:
            return self._shared[key]
        raise AttributeError(key)

    def delete(self):
        self._deleted = True

    def is_deleted(self):
        return self._deleted


class Identity(nn.Module):
    def forward(self, x, edge_data=None):
        return x

    def get_op_name(self):
        return 'Identity'


class Zero(nn.Module):
    def __init__(self, stride=1):
        super().__init__()
        self.stride = stride

    def forward(self, x, edge_data=None):
        return x.mul(0.)

    @property
    def get_op_name(self):
        return 'Zero'


class MaxPool(nn.Module):
    def __init__(self, kernel_size=3, stride=1):
        super().__init__()
        self.maxpool = nn.MaxPool2d(kernel_size, stride=stride, padding=1)

    def forward(self, x, edge_data=None):
        return self.maxpool(x)


class Conv1x1(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.conv = nn.Conv2d(C, C, 1, bias=False)

    def forward(self, x, edge_data=None):
        return self.conv(torch.relu(x))


class MixedOp(nn.Module):
    """Continous relaxation of the discrete search space."""
    def __init__(self, primitives):
        super().__init__()
        self.primitives = primitives
        for i, primitive in enumerate(primitives):
            self.add_module("primitive-{}".format(i), primitive)

    def forward(self, x, edge_data):
        normed_alphas = torch.softmax(edge_data.alpha, dim=-1)
        return sum(w * op(x, None) for w, op in zip(normed_alphas, self.primitives))

    def get_embedded_ops(self):
        return self.primitives


class Edge(object):
    def __init__(self, data):
        self.data = data


class SmallCell(nn.Module):
    """Three input nodes (0, 1, 2) feeding intermediate node 3 (a DARTS cell keeps 2 of them)."""
    OPTIMIZER_SCOPE = 'cell'

    def __init__(self, C):
        super().__init__()
        self.in_nodes = [0, 1, 2]
        self.edges = {}
        for u in self.in_nodes:
            data = EdgeData()
            data.set('op', [Identity(), Zero(stride=1), MaxPool(3, 1), Conv1x1(C)])
            self.edges[(u, 3)] = data
        self.ops = nn.ModuleDict()

    def update_edges(self, edge_fn, scope=None, private_edge_data=False):
        for key in sorted(self.edges):
            edge_fn(Edge(self.edges[key]))

    def update_nodes(self, node_fn, scope=None, single_instances=True):
        in_edges = [(key, self.edges[key]) for key in sorted(self.edges) if key[1] == 3]
        node_fn((3, {}), in_edges, [])

    def parse(self):
        self.ops = nn.ModuleDict()
        for (u, v), data in sorted(self.edges.items()):
            if data.is_deleted():
                continue
            op = data.op
            self.ops['{}-{}'.format(u, v)] = op if isinstance(op, nn.Module) else nn.ModuleList(op)
        return self

    def clone(self):
        return copy.deepcopy(self)

    def unparse(self):
        return self

    def prepare_discretization(self):
        """In DARTS a node can have a maximum of two incoming edges."""
        self.update_nodes(_truncate_input_edges, scope=self.OPTIMIZER_SCOPE, single_instances=True)

    def forward(self, inputs):
        out = 0
        for (u, v), data in sorted(self.edges.items()):
            if data.is_deleted():
                continue
            out = out + data.op(inputs[u], data)
        return out


def _truncate_input_edges(node, in_edges, out_edges):
    """
    Removes input edges if there are more than k.
    """
    k = 2
    if len(in_edges) >= k:
        if any(e.has('alpha') or (e.has('final') and e.final) for _, e in in_edges):
            # We are in the one-shot case
            for _, data in in_edges:
                if data.has('final') and data.final:
                    return  # We are looking at an out node
                data.alpha.data[1] = -float("inf")   # Zero op should never be max alpha
            sorted_edge_ids = sorted(in_edges, key=lambda x: max(x[1].alpha), reverse=True)
            keep_edges, _ = zip(*sorted_edge_ids[:k])
            for edge_id, edge_data in in_edges:
                if edge_id not in keep_edges:
                    edge_data.delete()
        else:
            # We are in the discrete case (e.g. random search)
            for _, data in in_edges:
                if isinstance(data.op, list) and data.op[1].get_op_name == 'Zero':
                    data.op.pop(1)
            if any(e.has('final') and e.final for _, e in in_edges):
                return
            else:
                for _ in range(len(in_edges) - k):
                    in_edges[random.randint(0, len(in_edges) - 1)][1].delete()


class DARTSOptimizer(object):
    @staticmethod
    def add_alphas(edge):
        """Function to add the architectural weights to the edges."""
        len_primitives = len(edge.data.op)
        alpha = torch.nn.Parameter(1e-3 * torch.randn(size=[len_primitives], requires_grad=True))
        edge.data.set('alpha', alpha, shared=True)

    @staticmethod
    def update_ops(edge):
        primitives = edge.data.op
        edge.data.set('op', MixedOp(primitives))

    def adapt_search_space(self, search_space):
        graph = search_space.clone()
        graph.update_edges(self.__class__.add_alphas, scope=graph.OPTIMIZER_SCOPE, private_edge_data=False)
        graph.update_edges(self.__class__.update_ops, scope=graph.OPTIMIZER_SCOPE, private_edge_data=True)
        self.architectural_weights = nn.ParameterList(
            [graph.edges[key].alpha for key in sorted(graph.edges)])
        graph.parse()
        graph.train()
        self.graph = graph
        self.scope = graph.OPTIMIZER_SCOPE

    def get_final_architecture(self):
        graph = self.graph.clone().unparse()
        graph.prepare_discretization()

        def discretize_ops(edge):
            if edge.data.has('alpha'):
                primitives = edge.data.op.get_embedded_ops()
                alphas = edge.data.alpha.detach().cpu()
                edge.data.set('op', primitives[np.argmax(alphas)])

        graph.update_edges(discretize_ops, scope=self.scope, private_edge_data=True)
        graph.parse()
        return graph
