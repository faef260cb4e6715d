# source: https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976/2
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# x feeds a side branch (conv1_p saves it) and is then updated with `x += some_layer` on the main branch.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv1_p = nn.Conv2d(8, 8, 3, padding=1)
        self.some = nn.Conv2d(3, 8, 1)

    def forward(self, input):
        some_layer = self.some(input)
        x = self.conv1(input)  # main branch
        x_p = self.conv1_p(x)  # another branch
        x += some_layer  # main branch
        return x, x_p


def compute():
    torch.manual_seed(0)
    net = Net()
    input = torch.randn(2, 3, 6, 6)
    x, x_p = net(input)
    loss = (x * x_p).mean()
    loss.backward()
    return {name: p.grad for name, p in net.named_parameters()}


if __name__ == "__main__":
    compute()
