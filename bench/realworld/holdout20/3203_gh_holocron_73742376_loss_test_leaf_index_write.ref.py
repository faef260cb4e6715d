# reference fix for 3203: holocron commit 73742376 in the test: the confident logits are written before
# `x.requires_grad_(True)` instead of created with requires_grad=True.
import importlib
import os
import sys
import unittest

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
F = importlib.import_module("3203helpers_holocron_functional")


class LossTester(unittest.TestCase):

    def _test_loss_function(self, name, same_loss=0., multi_label=False):

        num_batches = 2
        num_classes = 4
        # 4 classes
        x = torch.ones(num_batches, num_classes)
        x[:, 0, ...] = 10
        x.requires_grad_(True)

        loss_fn = F.__dict__[name]

        # Identical target
        if multi_label:
            target = torch.zeros_like(x)
            target[:, 0] = 1.
        else:
            target = torch.zeros(num_batches, dtype=torch.long)
        self.assertAlmostEqual(loss_fn(x, target).item(), same_loss, places=3)
        self.assertTrue(torch.allclose(loss_fn(x, target, reduction='none'),
                                       same_loss * torch.ones(num_batches, dtype=x.dtype),
                                       atol=1e-3))

        # Check that class rescaling works
        x = torch.rand(num_batches, num_classes, requires_grad=True)
        if multi_label:
            target = torch.rand(x.shape)
        else:
            target = (num_classes * torch.rand(num_batches)).to(torch.long)
        weights = torch.ones(num_classes)
        self.assertEqual(loss_fn(x, target).item(), loss_fn(x, target, weight=weights).item())

        # Check that ignore_index works
        self.assertEqual(loss_fn(x, target).item(), loss_fn(x, target, ignore_index=num_classes).item())
        # Ignore an index we are certain to be in the target
        if multi_label:
            ignore_index = torch.unique(target.argmax(dim=1))[0].item()
        else:
            ignore_index = torch.unique(target)[0].item()
        self.assertNotEqual(loss_fn(x, target).item(),
                            loss_fn(x, target, ignore_index=ignore_index).item())
        # Check backprop
        loss = loss_fn(x, target, ignore_index=0)
        loss.backward()

        # Test reduction
        self.assertAlmostEqual(loss_fn(x, target, reduction='sum').item(),
                               loss_fn(x, target, reduction='none').sum().item(), places=6)
        self.assertAlmostEqual(loss_fn(x, target, reduction='mean').item(),
                               (loss_fn(x, target, reduction='sum') / target.shape[0]).item(), places=6)
        return loss.detach(), x.grad

    def test_focal_loss(self):

        # Common verification
        return self._test_loss_function('focal_loss')

    def test_ls_celoss(self):

        num_batches = 2
        num_classes = 4

        # Common verification
        return self._test_loss_function('ls_cross_entropy', 0.1 / num_classes * (num_classes - 1) * 9)


def compute():
    torch.manual_seed(0)
    tester = LossTester()
    focal_loss, focal_grad = tester.test_focal_loss()
    ls_loss, ls_grad = tester.test_ls_celoss()
    return {
        "focal_loss": focal_loss,
        "focal_x.grad": focal_grad,
        "ls_loss": ls_loss,
        "ls_x.grad": ls_grad,
    }


if __name__ == "__main__":
    compute()
