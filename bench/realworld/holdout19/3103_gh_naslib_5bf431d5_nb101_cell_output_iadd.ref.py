# reference fix for 3103: NASLib commit 5bf431d5 in the library module (3103helpers_nb101_model_fixed.py):
# `outputs = outputs + self.input_op[self.num_vertices-1](tensors[0])` in Cell.forward.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
model_builder = importlib.import_module("3103helpers_nb101_model_fixed")

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
