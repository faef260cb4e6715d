# source: https://github.com/ImagingLab/ICIAR2018/issues/10
# error: A
# The image-wise network's classifier chains ReLU(inplace=True) and Dropout(inplace=True):
# the dropout overwrites the ReLU output that ReLU's backward needs.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ImageWiseNetwork(nn.Module):
    def __init__(self, input_size=1):
        super(ImageWiseNetwork, self).__init__()
        self._name = 'iw' + str(input_size)
        self.features = nn.Sequential(
            nn.Conv2d(in_channels=12 * input_size, out_channels=8, kernel_size=3, stride=1, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_channels=8, out_channels=1, kernel_size=1, stride=1),
        )
        self.classifier = nn.Sequential(
            nn.Linear(1 * 4 * 4, 16),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5, inplace=True),
            nn.Linear(16, 16),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5, inplace=True),
            nn.Linear(16, 4),
        )

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        x = self.classifier(x)
        x = F.log_softmax(x, dim=1)
        return x


def compute():
    torch.manual_seed(0)
    net = ImageWiseNetwork()
    out = net(torch.randn(2, 12, 4, 4))
    loss = F.nll_loss(out, torch.tensor([0, 3]))
    loss.backward()
    return {n: p.grad for n, p in net.named_parameters()}


if __name__ == "__main__":
    compute()
