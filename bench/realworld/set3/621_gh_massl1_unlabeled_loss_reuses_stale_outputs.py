# source: https://github.com/ShuaiChenBIGR/MASSL-segmentation-framework/issues/1
# pattern: other
# codemod_fixable: no
# error: A
# ref_semantics: differs
# MASSL semi-supervised segmentation (Network_training_SSL_epoch_attention_BraTS18.py, train_model): in the
# 'trainLabeled' phase outputsU_back/outputsU_fore are sliced from the reconstruction head, the loss is backpropagated
# with retain_graph=True and optimizer[0].step() updates the shared weights; the 'trainUnlabeled' phase runs a new
# forward but builds its loss from the *previous* phase's outputsU_back/outputsU_fore (never reassigned there), so
# loss.backward() goes through the stale graph whose weights were changed in place. The reporter's workaround in
# the issue: detach those tensors (and the labels) in the unlabeled loss (or use torch < 1.5); the ref applies it,
# which leaves only the loss-weight path (w2, w3 from outputsL) trainable in that phase, hence `differs`.
# The 3-D attention U-Net (ssl_3d_attention.MASSL_norm) is replaced by a small 2-D encoder with a segmentation head
# and a two-channel reconstruction head; the Dice criterion is a soft-Dice stand-in. One labeled and one unlabeled
# phase of the epoch loop are run.
import torch
import torch.nn as nn
import torch.optim as optim


class MASSL_norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU())
        self.seg = nn.Conv2d(8, 1, 1)
        self.rec = nn.Conv2d(8, 2, 1)

    def forward(self, x, phase=None, network_switch=None):
        h = self.encoder(x)
        return torch.sigmoid(self.seg(h)), self.rec(h)


class DiceCoefficientLF(nn.Module):
    def forward(self, pred, target):
        inter = (pred * target).sum()
        return 1 - (2 * inter + 1) / (pred.sum() + target.sum() + 1)


def train_model(model, samples, criterion, optimizer, mode='fuse', loss_weighted=True):
    grads = {}
    for phase in ['trainLabeled', 'trainUnlabeled']:
        sample1, sample2 = samples
        if phase == 'trainLabeled':
            inputs = sample1['image'][:, 2:3].float()
            labels = sample1['mask'][:].float()
            image = sample1['image'][:, 2:3].float()
        elif phase == 'trainUnlabeled':
            inputs = sample2['image'][:, 2:3].float()
            labels = sample2['mask'][:].float()
            image = sample2['image'][:, 2:3].float()

        optimizer[0].zero_grad()
        optimizer[1].zero_grad()

        with torch.set_grad_enabled(phase == 'trainLabeled' or phase == 'trainUnlabeled'):
            if phase == 'trainLabeled':
                outputsL, outputsU = model(inputs, phase=phase)
                if mode == 'fuse':
                    outputsU_back = outputsU[:, 0]
                    outputsU_fore = outputsU[:, 1]
                    labels_back = (1.0 - outputsL) * image.float()
                    labels_fore = outputsL * image.float()
                w1 = 1.0
                w2 = 0.0
                w3 = 0.0
                loss = w1 * criterion[0](outputsL.float(), labels.float()) + \
                    w2 * criterion[1](outputsU_back.float(), labels_back.float()) + \
                    w3 * criterion[1](outputsU_fore.float(), labels_fore.float())

            elif phase == 'trainUnlabeled':
                outputsL, outputsU = model(inputs, phase=phase)
                if mode == 'fuse':
                    labels_back = (1.0 - outputsL) * image.float()
                    labels_fore = outputsL * image.float()
                if loss_weighted:
                    w2 = torch.sum((1.0 - outputsL))
                    w3 = torch.sum(outputsL)
                    total = w2 + w3
                    w2 = w2 / total
                    w3 = w3 / total
                loss = w2 * criterion[1](outputsU_back.float(), labels_back.float()) + \
                    w3 * criterion[1](outputsU_fore.float(), labels_fore.float())

            if phase == 'trainLabeled':
                loss.backward(retain_graph=True)
                grads.update({"L." + n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None})
                optimizer[0].step()
            elif phase == 'trainUnlabeled':
                loss.backward()
                grads.update({"U." + n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None})
                optimizer[1].step()
    return grads


def compute():
    torch.manual_seed(0)
    model = MASSL_norm()
    criterion = (DiceCoefficientLF(), nn.MSELoss())
    optimizer_ft = (optim.Adam(model.parameters(), lr=1e-2), optim.Adam(model.parameters(), lr=1e-3))
    sample1 = {'image': torch.rand(2, 4, 8, 8), 'mask': (torch.rand(2, 1, 8, 8) > 0.7).float()}
    sample2 = {'image': torch.rand(2, 4, 8, 8), 'mask': torch.zeros(2, 1, 8, 8)}
    grads = train_model(model, (sample1, sample2), criterion, optimizer_ft)
    grads.update({"final." + n: p.detach().clone() for n, p in model.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
