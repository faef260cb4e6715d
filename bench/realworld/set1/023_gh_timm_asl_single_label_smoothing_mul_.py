# source: https://github.com/huggingface/pytorch-image-models/pull/1500 (timm AsymmetricLossSingleLabel, from Alibaba-MIIL/ASL)
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Label smoothing `self.targets_classes.mul_(1 - self.eps).add_(self.eps / num_classes)` mutates the one-hot target
# tensor that `xs_pos * targets` saved for backward.
import torch
import torch.nn as nn


class AsymmetricLossSingleLabel(nn.Module):
    def __init__(self, gamma_pos=1, gamma_neg=4, eps: float = 0.1, reduction='mean'):
        super(AsymmetricLossSingleLabel, self).__init__()

        self.eps = eps
        self.logsoftmax = nn.LogSoftmax(dim=-1)
        self.targets_classes = []  # prevent gpu repeated memory allocation
        self.gamma_pos = gamma_pos
        self.gamma_neg = gamma_neg
        self.reduction = reduction

    def forward(self, inputs, target, reduction=None):
        """"
        Parameters
        ----------
        x: input logits
        y: targets (1-hot vector)
        """

        num_classes = inputs.size()[-1]
        log_preds = self.logsoftmax(inputs)
        self.targets_classes = torch.zeros_like(inputs).scatter_(1, target.long().unsqueeze(1), 1)

        # ASL weights
        targets = self.targets_classes
        anti_targets = 1 - targets
        xs_pos = torch.exp(log_preds)
        xs_neg = 1 - xs_pos
        xs_pos = xs_pos * targets
        xs_neg = xs_neg * anti_targets
        asymmetric_w = torch.pow(1 - xs_pos - xs_neg,
                                 self.gamma_pos * targets + self.gamma_neg * anti_targets)
        log_preds = log_preds * asymmetric_w

        if self.eps > 0:  # label smoothing
            self.targets_classes.mul_(1 - self.eps).add_(self.eps / num_classes)

        # loss calculation
        loss = - self.targets_classes.mul(log_preds)

        loss = loss.sum(dim=-1)
        if self.reduction == 'mean':
            loss = loss.mean()

        return loss


def compute():
    torch.manual_seed(0)
    model = nn.Linear(6, 5)
    criterion = AsymmetricLossSingleLabel()
    x = torch.randn(4, 6)
    target = torch.tensor([0, 3, 1, 4])
    loss = criterion(model(x), target)
    loss.backward()
    return {"weight": model.weight.grad, "bias": model.bias.grad}


if __name__ == "__main__":
    compute()
