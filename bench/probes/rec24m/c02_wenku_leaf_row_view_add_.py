# source: https://siteproxy.ruqli.workers.dev:443/https/wenku.csdn.net/answer/4mnygadxby
# error: C (a view of a leaf Variable that requires grad is being used in an in-place operation)
import torch


def main():
    weight = torch.randn(3, 3, requires_grad=True)
    weight_view = weight[0]
    weight_view.add_(1)
    out = weight.sum()
    out.backward()
    return [out.detach(), weight.grad]
