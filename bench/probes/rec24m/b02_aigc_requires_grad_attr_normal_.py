# source: https://github.com/zhuyuedlut/AIGC
# error: B (w.requires_grad = True makes w a leaf that requires grad; normal_ writes into it)
import torch


def main():
    w = torch.FloatTensor(10)
    w.requires_grad = True
    w.normal_()
    loss = (w * 2).sum()
    loss.backward()
    return [loss.detach(), w.grad]
