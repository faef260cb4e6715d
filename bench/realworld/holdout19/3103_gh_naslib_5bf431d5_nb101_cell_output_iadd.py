# source: https://github.com/automl/NASLib/commit/5bf431d5b1e9b5e716792f767bf0733799892be9 (buggy code: microsoft/archai archai/algos/nasbench101/model.py at 5be60a01)
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# NASLib (a neural-architecture-search library) built NAS-Bench-101 architectures with archai's PyTorch port
# (naslib/search_spaces/nasbench101/conversions.py: `from archai.algos.nasbench101 import model_builder`;
# convert_spec_to_model(spec) -> model_builder.build(spec['matrix'], spec['ops'])). In archai's Cell.forward, when exactly
# one interior vertex feeds the cell output, `outputs` is that vertex's output itself (the "perf optimization" branch),
# the result of ConvBnRelu's ReLU; when the input also feeds the output, the cell adds its projection with
# `outputs += self.input_op[self.num_vertices-1](tensors[0])`, rewriting the tensor ReLU's backward saved, so training
# such an architecture (or scoring it with a gradient-based zero-cost proxy) raises "one of the variables needed for
# gradient computation has been modified by an inplace operation ... which is output 0 of Relu". NASLib commit 4ecbc34b
# ("Fix inplace ReLUs in NASBench101 model") first turned the model's in-place ReLUs off, which does not remove this
# failure (ReLU saves its result either way); commit 5bf431d5 vendored archai's model into NASLib "and fixed inplace
# operation": `outputs = outputs + self.input_op[self.num_vertices-1](tensors[0])`.
# The PyTorch port archai's file was taken from, romulus0914/NASBench-PyTorch (maintained as automl/NASBench-PyTorch), went
# through the same two steps: 714500a (2021-05-25, "ReLu can't be inplace in this case, as it crashes on some of the
# networks") and a36d7a7 (2022-10-10, "Fixed an error in tensor modification that resulted in backward pass crashing
# for some networks": `outputs = outputs + self.last_inop(tensors[0])`).
# The library module is 3103helpers_nb101_model.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a 4-vertex cell spec (input -> conv3x3 -> conv1x1 -> output, plus input -> output), a network of
# width 8 with 2 stacks of 1 cell and 4 classes (NASLib's defaults are 128 / 3 / 3 / 10), a random batch of 4 RGB 8x8
# images, one cross-entropy training step's backward (no optimizer step).
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
model_builder = importlib.import_module("3103helpers_nb101_model")

MATRIX = [[0, 1, 0, 1],
          [0, 0, 1, 0],
          [0, 0, 0, 1],
          [0, 0, 0, 0]]
OPS = ['input', 'conv3x3-bn-relu', 'conv1x1-bn-relu', 'output']


def convert_spec_to_model(spec):
    # naslib/search_spaces/nasbench101/conversions.py (the model wrapper is left out)
    return model_builder.build(spec['matrix'], spec['ops'], stem_out_channels=8, num_stacks=2,
                               num_modules_per_stack=1, num_labels=4)


def compute():
    torch.manual_seed(0)
    model = convert_spec_to_model({'matrix': MATRIX, 'ops': OPS})
    model.train()
    images = torch.randn(4, 3, 8, 8)
    labels = torch.tensor([0, 1, 2, 3])

    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    cell = model.layers[1]
    return {
        "loss": loss.detach(),
        "logits": logits.detach(),
        "stem.conv.weight.grad": model.layers[0].conv_bn_relu[0].weight.grad,
        "cell1.vertex1.conv.weight.grad": cell.vertex_op[1].conv3x3.conv_bn_relu[0].weight.grad,
        "cell1.vertex2.conv.weight.grad": cell.vertex_op[2].conv1x1.conv_bn_relu[0].weight.grad,
        "cell1.output_projection.conv.weight.grad": cell.input_op[3].conv_bn_relu[0].weight.grad,
        "classifier.weight.grad": model.classifier.weight.grad,
    }


if __name__ == "__main__":
    compute()
