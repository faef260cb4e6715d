# Library module for case 2804 (original).
# pyg-team/pytorch_geometric (then rusty1s/pytorch_geometric, May 2018), torch_geometric/transform/cartesian.py, read
# at the parent of commit 30e86fc ("fixed backprop"). Written anew at small size (not copied): the Cartesian transform
# (pseudo-coordinates `pos[col] - pos[row]`, normalised in place by `cart /= 2 * cart.abs().max()`, shifted by 0.5,
# concatenated to existing edge weights or stored as them) follows the source. Stand-in: the Data class of that time
# (torch_geometric.datasets.dataset.Data, positional fields input, pos, index, weight, target), a plain container here.
import torch


class Data(object):
    def __init__(self, input, pos, index, weight, target):
        self.input = input
        self.pos = pos
        self.index = index
        self.weight = weight
        self.target = target


class Cartesian(object):
    r"""Saves the globally normalized spatial relation of linked nodes as Cartesian coordinates (mapped to [0, 1])
    in its edge attributes."""

    def __init__(self, cat=True):
        self.cat = cat

    def __call__(self, data):
        (row, col), pos, pseudo = data.index, data.pos, data.weight

        cart = pos[col] - pos[row]
        cart /= 2 * cart.abs().max()
        cart += 0.5
        cart = cart.view(-1, 1) if cart.dim() == 1 else cart

        if pseudo is not None and self.cat:
            pseudo = pseudo.view(-1, 1) if pseudo.dim() == 1 else pseudo
            data.weight = torch.cat([pseudo, cart.type_as(pseudo)], dim=-1)
        else:
            data.weight = cart

        return data

    def __repr__(self):
        return '{}(cat={})'.format(self.__class__.__name__, self.cat)
