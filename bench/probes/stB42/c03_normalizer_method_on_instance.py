# source: own knowledge (a feature normalizer object with an `apply` method that standardises each row of a
# batch in place, `for row, m, s in zip(batch, self.mean, self.std): row.sub_(m).div_(s)`, given a model's output)
import torch
import torch.nn as nn


class Normalizer:
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def apply(self, batch):
        for row, m, s in zip(batch, self.mean, self.std):
            row.sub_(m).div_(s)
        return batch


norm = Normalizer([0.1, 0.2], [2.0, 4.0])


def main():
    torch.manual_seed(0)
    head = nn.Linear(3, 5)
    y = norm.apply(head(torch.randn(2, 3)))
    y.sum().backward()
    return head.weight.grad
