# reference fix for 504 (thread / SAM README): the second pass builds and backpropagates a new loss computed at
# the perturbed weights w + e(w).
import torch
import torch.nn as nn


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
        defaults = dict(rho=rho, adaptive=adaptive, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group['rho'] / (grad_norm + 1e-12)
            for p in group['params']:
                if p.grad is None:
                    continue
                self.state[p]['old_p'] = p.data.clone()
                e_w = (torch.pow(p, 2) if group['adaptive'] else 1.0) * p.grad * scale.to(p)
                p.add_(e_w)  # climb to the local maximum "w + e(w)"
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                p.data = self.state[p]['old_p']  # get back to "w" from "w + e(w)"
        self.base_optimizer.step()  # do the actual "sharpness-aware" update
        if zero_grad:
            self.zero_grad()

    def _grad_norm(self):
        shared_device = self.param_groups[0]['params'][0].device
        norm = torch.norm(
            torch.stack([
                ((torch.abs(p) if group['adaptive'] else 1.0) * p.grad).norm(p=2).to(shared_device)
                for group in self.param_groups for p in group['params'] if p.grad is not None
            ]),
            p=2,
        )
        return norm


class Backbone(nn.Module):
    """stand-in for the LL4AL ResNet: returns (scores, embedding, [features])"""

    def __init__(self, num_classes=10):
        super().__init__()
        self.layer1 = nn.Linear(12, 16)
        self.layer2 = nn.Linear(16, 16)
        self.linear = nn.Linear(16, num_classes)

    def forward(self, x):
        out1 = torch.relu(self.layer1(x))
        out2 = torch.relu(self.layer2(out1))
        return self.linear(out2), out2, [out1, out2]


def train_epoch(models, criterion, optimizers, dataloaders):
    models['backbone'].train()
    grads = {}
    for it, data in enumerate(dataloaders['train']):
        inputs = data[0]
        labels = data[1]
        optimizers['backbone'].zero_grad()

        scores, _, features = models['backbone'](inputs)

        target_loss = criterion(scores, labels)
        m_backbone_loss = torch.sum(target_loss) / target_loss.size(0)
        loss = m_backbone_loss

        # -----------------SAM Optimizer -------------------
        # first forward-backward pass
        loss.backward(retain_graph=True)
        optimizers['backbone'].first_step(zero_grad=True)

        # second forward-backward pass
        target_loss_2 = criterion(models['backbone'](inputs)[0], labels)
        loss_2 = torch.sum(target_loss_2) / target_loss_2.size(0)
        loss_2.backward()
        grads.update({"it%d.%s" % (it, n): p.grad.clone() for n, p in models['backbone'].named_parameters()})
        optimizers['backbone'].second_step(zero_grad=True)
    return grads


def compute():
    torch.manual_seed(0)
    models = {'backbone': Backbone()}
    criterion = nn.CrossEntropyLoss(reduction='none')
    base_optimizer = torch.optim.SGD
    optim_backbone = SAM(models['backbone'].parameters(), base_optimizer, lr=0.1, momentum=0.9, weight_decay=5e-4)
    optimizers = {'backbone': optim_backbone}
    dataloaders = {'train': [(torch.randn(8, 12), torch.randint(0, 10, (8,))) for _ in range(2)]}
    out = train_epoch(models, criterion, optimizers, dataloaders)
    out.update({"final." + n: p.detach().clone() for n, p in models['backbone'].named_parameters()})
    return out


if __name__ == "__main__":
    compute()
