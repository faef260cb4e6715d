# source: https://github.com/BierOne/bottom-up-attention-vqa/issues/6
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# SimpleClassifier: weight_norm(Linear) -> ReLU -> nn.Dropout(dropout, inplace=True) -> weight_norm(Linear);
# the dropout overwrites the ReLU output ("[512, 2048], which is output 0 of ReluBackward0").
import torch
import torch.nn as nn
from torch.nn.utils.weight_norm import weight_norm


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super(SimpleClassifier, self).__init__()
        layers = [
            weight_norm(nn.Linear(in_dim, hid_dim), dim=None),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=True),
            weight_norm(nn.Linear(hid_dim, out_dim), dim=None)
        ]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        logits = self.main(x)
        return logits


def instance_bce_with_logits(logits, labels):
    assert logits.dim() == 2

    loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
    loss *= labels.size(1)
    return loss


def compute():
    torch.manual_seed(0)
    classifier = SimpleClassifier(12, 2 * 12, 7, 0.5)
    joint_repr = torch.randn(5, 12)
    labels = torch.rand(5, 7)
    pred = classifier(joint_repr)
    loss = instance_bce_with_logits(pred, labels)
    loss.backward()
    return {name: p.grad for name, p in classifier.named_parameters()}


if __name__ == "__main__":
    compute()
