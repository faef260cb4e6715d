# control: one branch of the gate builder returns a module the file cannot know (a class from a registry it
# is handed): `h += x` is not proven (it runs: the registry's Identity saves nothing).
import torch
import torch.nn as nn


class GatedResidual(nn.Module):
    def __init__(self, dim, kind, registry):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.gate = self.make_gate(kind, registry)

    @staticmethod
    def make_gate(kind, registry):
        if kind == "sigmoid":
            return nn.Sigmoid()
        return registry[kind]()

    def forward(self, x):
        h = self.gate(self.fc(x))
        h += x
        return h


def compute():
    torch.manual_seed(0)
    block = GatedResidual(6, "none", {"none": nn.Identity})
    block(torch.randn(4, 6)).sum().backward()
    return [p.grad.sum().item() for p in block.parameters()]


if __name__ == "__main__":
    compute()
