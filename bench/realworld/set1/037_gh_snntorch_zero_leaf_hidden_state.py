# source: https://github.com/jeshraghian/snntorch/pull/443 (reviewing the fix proposed in snntorch PR #424)
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# SpikingNeuron.zeros() implemented as `state.zero_()` crashes on an init_leaky()-style hidden state that is a leaf
# requiring grad (resetting the state before the first forward pass). snntorch is not available in the eval env:
# a minimal Leaky neuron with a sigmoid surrogate stands in for snn.Leaky.
import torch
import torch.nn as nn


class SpikingNeuron(nn.Module):
    @staticmethod
    def zeros(*args):
        for state in args:
            state.zero_()


class Leaky(SpikingNeuron):
    def __init__(self, beta, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def init_leaky(self, shape=(2, 4)):
        return torch.ones(*shape)

    def forward(self, input_, mem):
        mem = self.beta * mem + input_
        spk = torch.sigmoid(5.0 * (mem - self.threshold))  # surrogate spike
        return spk, mem


def compute():
    torch.manual_seed(0)
    fc = nn.Linear(3, 4)
    lif = Leaky(beta=0.9)
    mem = lif.init_leaky()
    mem.requires_grad_(True)
    SpikingNeuron.zeros(mem)  # reset hidden state at the start of the sequence
    x = torch.randn(5, 2, 3)
    spk_rec = []
    for step in range(x.size(0)):
        spk, mem_out = lif(fc(x[step]), mem if step == 0 else mem_out)
        spk_rec.append(spk)
    loss = torch.stack(spk_rec).sum()
    loss.backward()
    return {"mem": mem.grad, "fc.weight": fc.weight.grad, "fc.bias": fc.bias.grad}


if __name__ == "__main__":
    compute()
