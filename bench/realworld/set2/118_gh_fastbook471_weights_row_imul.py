# source: https://github.com/fastai/fastbook/pull/471
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# fastbook 04_mnist_basics: after `weights = init_params((28*28,1))` (a leaf with requires_grad), the notebook nudges
# one weight with `weights[0] *= 1.0001` to show that accuracy does not change. That in-place update on a view of a
# leaf raises; the chapter then trains the linear model with mnist_loss. Random tensors replace the MNIST 3s/7s.
import torch


def init_params(size, std=1.0): return (torch.randn(size)*std).requires_grad_()


def mnist_loss(predictions, targets):
    predictions = predictions.sigmoid()
    return torch.where(targets==1, 1-predictions, predictions).mean()


def compute():
    torch.manual_seed(0)
    train_x = torch.rand(16, 28*28)
    train_y = torch.randint(0, 2, (16, 1)).float()

    weights = init_params((28*28,1))
    bias = init_params(1)

    def linear1(xb): return xb@weights + bias

    preds = linear1(train_x)
    corrects = (preds>0.0).float() == train_y
    corrects.float().mean().item()

    weights[0] *= 1.0001
    preds = linear1(train_x)
    ((preds>0.0).float() == train_y).float().mean().item()

    # calc_grad on a mini-batch
    xb, yb = train_x[:4], train_y[:4]
    preds = linear1(xb)
    loss = mnist_loss(preds, yb)
    loss.backward()
    return {"weights": weights.grad, "bias": bias.grad}


if __name__ == "__main__":
    compute()
