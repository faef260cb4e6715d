# e2cnn nn/init.py (e2cnn 0.1): generalized_he_init() and the variance computation it uses; the scipy-based
# deltaorthonormal_init() is omitted.
from collections import defaultdict

import math
import torch


def _generalized_he_init_variances(basisexpansion):
    vars = torch.ones((basisexpansion.dimension(),))

    inputs_count = defaultdict(lambda: set())
    basis_count = defaultdict(int)

    basis_info = list(basisexpansion.get_basis_info())

    for attr in basis_info:
        i, o = attr["in_irreps_position"], attr["out_irreps_position"]
        in_irrep, out_irrep = attr["in_irrep"], attr["out_irrep"]
        inputs_count[o].add(in_irrep)
        basis_count[(in_irrep, o)] += 1

    for o in inputs_count.keys():
        inputs_count[o] = len(inputs_count[o])

    for w, attr in enumerate(basis_info):
        i, o = attr["in_irreps_position"], attr["out_irreps_position"]
        in_irrep, out_irrep = attr["in_irrep"], attr["out_irrep"]
        vars[w] = 1. / math.sqrt(inputs_count[o] * basis_count[(in_irrep, o)])

    return vars


cached_he_vars = {}


def generalized_he_init(tensor: torch.Tensor, basisexpansion, cache: bool = False):
    # Initialization

    assert tensor.shape == (basisexpansion.dimension(),)

    if cache and basisexpansion not in cached_he_vars:
        cached_he_vars[basisexpansion] = _generalized_he_init_variances(basisexpansion)

    if cache:
        vars = cached_he_vars[basisexpansion]
    else:
        vars = _generalized_he_init_variances(basisexpansion)

    tensor[:] = vars * torch.randn_like(tensor)
