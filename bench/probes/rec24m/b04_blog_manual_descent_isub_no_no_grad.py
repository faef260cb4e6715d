# source: https://hao-yiwen.github.io/yiwen-blog-website/en/docs/ai/frameworks/pytorch/common-errors
# error: B (the update of a hand-written gradient descent runs outside torch.no_grad())
import torch


def train(data, lr=0.1):
    w = torch.randn(3, 1, requires_grad=True)
    for x, y in data:
        pred = x @ w
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        w -= lr * w.grad
        w.grad.zero_()
    return w


def main():
    torch.manual_seed(0)
    data = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(3)]
    w = train(data)
    return [w.detach()]
