# Library module for case 2709 (reference: commit cf6a7d7 applied, the draw goes through .data).
# allenai/allennlp, allennlp/nn/initializers.py, read at the parent of commit cf6a7d7 ("Fix bug in uniform_unit_scaling
# #2239 (#2273)", 2019-01-05; the commit is kept in the history of allenai/allennlp-models, which was split from it).
# Written anew at small size (not copied): uniform_unit_scaling (input size = product of all dimensions but the last,
# bound sqrt(3 / size) times torch.nn.init.calculate_gain(nonlinearity), then the in-place uniform draw) follows the
# source. Stand-in: InitializerApplicator reduced to what it does for a list of (regex, initializer) pairs: apply the
# first initializer whose regex matches each named parameter.
import math
import re

import torch


def uniform_unit_scaling(tensor, nonlinearity="linear"):
    size = 1.0
    for dimension in list(tensor.size())[:-1]:
        size *= dimension
    max_value = math.sqrt(3 / size) * torch.nn.init.calculate_gain(nonlinearity, tensor)
    return tensor.data.uniform_(-max_value, max_value)



class InitializerApplicator:
    def __init__(self, initializers=None):
        self._initializers = initializers or []

    def __call__(self, module):
        for name, parameter in module.named_parameters():
            for regex, initializer in self._initializers:
                if re.search(regex, name):
                    initializer(parameter)
                    break
