# source: https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# forward() updates b[i] = b[i] + 1 in a loop while torch.mm(self.param, b) keeps b saved for backward.
import torch
import torch.nn as nn
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.param = nn.Parameter(torch.randn(10, 10) * 0.1)

    def forward(self, a):
        b = Variable(torch.Tensor(10, 1))
        y = 0
        b = torch.mm(self.param, a)
        for i in range(10):
            b[i] = b[i] + 1  # inpalce operation
            y = y + torch.mm(self.param, b)
        return y


def compute():
    torch.manual_seed(0)
    net = Net()
    a = torch.randn(10, 1)
    y = net(a)
    y.sum().backward()
    return {"param": net.param.grad}


if __name__ == "__main__":
    compute()
