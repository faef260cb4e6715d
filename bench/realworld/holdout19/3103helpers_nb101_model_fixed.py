# Library module for case 3103 (reference: the maintainers' fix).
# automl/NASLib commit 5bf431d5 ("added base_ops.py graph_util.py model.py model_builder.py model_spec.py from archai
# and fixed inplace operation", 2022-05-17): NASLib's vendored copy of archai's NAS-Bench-101 model, in which
# Cell.forward keeps the original line as a comment and adds the projection of the input out of place,
# `outputs = outputs + self.input_op[self.num_vertices-1](tensors[0])`. Everything else is as in
# 3103helpers_nb101_model.py (same stand-ins; see its header).
import math
from typing import List

import numpy as np
import torch
import torch.nn as nn


class ConvBnRelu(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding=0):
        super(ConvBnRelu, self).__init__()
        self.conv_bn_relu = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.conv_bn_relu(x)


class Conv3x3BnRelu(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(Conv3x3BnRelu, self).__init__()
        self.conv3x3 = ConvBnRelu(in_channels, out_channels, 3, 1, 1)

    def forward(self, x):
        return self.conv3x3(x)


class Conv1x1BnRelu(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(Conv1x1BnRelu, self).__init__()
        self.conv1x1 = ConvBnRelu(in_channels, out_channels, 1, 1, 0)

    def forward(self, x):
        return self.conv1x1(x)


class MaxPool3x3(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=1):
        super(MaxPool3x3, self).__init__()
        self.maxpool = nn.MaxPool2d(kernel_size, stride, padding)

    def forward(self, x):
        return self.maxpool(x)


OP_MAP = {
    'conv3x3-bn-relu': Conv3x3BnRelu,
    'conv1x1-bn-relu': Conv1x1BnRelu,
    'maxpool3x3': MaxPool3x3,
}


class ModelSpec(object):
    def __init__(self, matrix, ops):
        self.matrix = np.array(matrix)
        self.ops = list(ops)


class Network(nn.Module):
    def __init__(self, spec, stem_out_channels, num_stacks, num_modules_per_stack, num_labels):
        super(Network, self).__init__()
        self.layers = nn.ModuleList([])
        in_channels = 3
        out_channels = stem_out_channels
        stem_conv = ConvBnRelu(in_channels, out_channels, 3, 1, 1)
        self.layers.append(stem_conv)
        in_channels = out_channels
        for stack_num in range(num_stacks):
            if stack_num > 0:
                downsample = nn.MaxPool2d(kernel_size=2, stride=2)
                self.layers.append(downsample)
                out_channels *= 2
            for module_num in range(num_modules_per_stack):
                cell = Cell(spec, in_channels, out_channels)
                self.layers.append(cell)
                in_channels = out_channels
        self.classifier = nn.Linear(out_channels, num_labels)
        self._initialize_weights()

    def forward(self, x):
        for _, layer in enumerate(self.layers):
            x = layer(x)
        out = torch.mean(x, (2, 3))
        out = self.classifier(out)
        return out

    def _initialize_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2.0 / n))
                if m.bias is not None:
                    m.bias.data.zero_()
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()
            elif isinstance(m, nn.Linear):
                m.weight.data.normal_(0, 0.01)
                m.bias.data.zero_()


class Cell(nn.Module):
    def __init__(self, spec, in_channels, out_channels):
        super(Cell, self).__init__()
        self.spec = spec
        self.num_vertices = np.shape(self.spec.matrix)[0]
        self.vertex_channels = ComputeVertexChannels(in_channels, out_channels, self.spec.matrix)
        self.vertex_op = nn.ModuleList([None])
        for t in range(1, self.num_vertices - 1):
            op = OP_MAP[spec.ops[t]](self.vertex_channels[t], self.vertex_channels[t])
            self.vertex_op.append(op)
        self.input_op = nn.ModuleList([None])
        for t in range(1, self.num_vertices):
            if self.spec.matrix[0, t]:
                self.input_op.append(Projection(in_channels, self.vertex_channels[t]))
            else:
                self.input_op.append(None)

    def forward(self, x):
        tensors = [x]
        out_concat = []
        for t in range(1, self.num_vertices - 1):
            fan_in = [Truncate(tensors[src], self.vertex_channels[t]) for src in range(1, t) if self.spec.matrix[src, t]]
            if self.spec.matrix[0, t]:
                fan_in.append(self.input_op[t](x))
            vertex_input = sum(fan_in)
            vertex_output = self.vertex_op[t](vertex_input)
            tensors.append(vertex_output)
            if self.spec.matrix[t, self.num_vertices - 1]:
                out_concat.append(tensors[t])

        if not out_concat:
            assert self.spec.matrix[0, self.num_vertices - 1]
            outputs = self.input_op[self.num_vertices - 1](tensors[0])
        else:
            if len(out_concat) == 1:  # perf optimization
                outputs = out_concat[0]
            else:
                outputs = torch.cat(out_concat, 1)

            # if input is also connected to output then apply output vertex operation
            # and then do sum with concatenated tensor
            if self.spec.matrix[0, self.num_vertices - 1]:
                # outputs += self.input_op[self.num_vertices-1](tensors[0])
                outputs = outputs + self.input_op[self.num_vertices - 1](tensors[0])

        return outputs


def Projection(in_channels, out_channels):
    """1x1 projection (as in ResNet) followed by batch normalization and ReLU."""
    return ConvBnRelu(in_channels, out_channels, 1)


def Truncate(inputs, channels):
    input_channels = inputs.size()[1]
    if input_channels < channels:
        raise ValueError('input channel < output channels for truncate')
    elif input_channels == channels:
        return inputs
    else:
        assert input_channels - channels == 1
        return inputs[:, :channels, :, :]


def ComputeVertexChannels(in_channels, out_channels, matrix):
    num_vertices = np.shape(matrix)[0]
    vertex_channels = [0] * num_vertices
    vertex_channels[0] = in_channels
    vertex_channels[num_vertices - 1] = out_channels
    if num_vertices == 2:
        return vertex_channels
    in_degree = np.sum(matrix[1:], axis=0)
    interior_channels = out_channels // in_degree[num_vertices - 1]
    correction = out_channels % in_degree[num_vertices - 1]
    for v in range(1, num_vertices - 1):
        if matrix[v, num_vertices - 1]:
            vertex_channels[v] = interior_channels
            if correction:
                vertex_channels[v] += 1
                correction -= 1
    for v in range(num_vertices - 3, 0, -1):
        if not matrix[v, num_vertices - 1]:
            for dst in range(v + 1, num_vertices - 1):
                if matrix[v, dst]:
                    vertex_channels[v] = max(vertex_channels[v], vertex_channels[dst])
        assert vertex_channels[v] > 0
    final_fan_in = 0
    for v in range(1, num_vertices - 1):
        if matrix[v, num_vertices - 1]:
            final_fan_in += vertex_channels[v]
        for dst in range(v + 1, num_vertices - 1):
            if matrix[v, dst]:
                assert vertex_channels[v] >= vertex_channels[dst]
    assert final_fan_in == out_channels or num_vertices == 2
    return vertex_channels


def build(desc_matrix: List[List[int]], vertex_ops: List[str], device=None,
          stem_out_channels=128, num_stacks=3, num_modules_per_stack=3, num_labels=10) -> nn.Module:
    model_spec = ModelSpec(desc_matrix, vertex_ops)
    model = Network(model_spec, stem_out_channels, num_stacks, num_modules_per_stack, num_labels)
    return model
