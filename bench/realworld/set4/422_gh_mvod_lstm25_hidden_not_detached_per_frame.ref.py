# reference fix for 422: the thread's fix: `net.detach_hidden()` inside the frame loop, after each optimizer step
# (truncates BPTT at every frame; changes the gradients).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BottleneckLSTMCell(nn.Module):
    def __init__(self, input_channels, hidden_channels):
        super(BottleneckLSTMCell, self).__init__()
        assert hidden_channels % 2 == 0
        self.input_channels = int(input_channels)
        self.hidden_channels = int(hidden_channels)
        self.W = nn.Conv2d(in_channels=self.input_channels, out_channels=self.input_channels, kernel_size=3,
                           groups=self.input_channels, stride=1, padding=1)
        self.Wy = nn.Conv2d(int(self.input_channels + self.hidden_channels), self.hidden_channels, kernel_size=1)
        self.Wi = nn.Conv2d(self.hidden_channels, self.hidden_channels, 3, 1, 1, groups=self.hidden_channels,
                            bias=False)
        self.Wbi = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbf = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbc = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbo = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wci = None
        self.Wcf = None
        self.Wco = None
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2. / n))
                if m.bias is not None:
                    m.bias.data.zero_()

    def forward(self, x, h, c):
        x = self.W(x)
        y = torch.cat((x, h), 1)  # concatenate input and hidden layers
        i = self.Wy(y)  # reduce to hidden layer size
        b = self.Wi(i)  # depth wise 3*3
        ci = torch.sigmoid(self.Wbi(b) + c * self.Wci)
        cf = torch.sigmoid(self.Wbf(b) + c * self.Wcf)
        cc = cf * c + ci * F.relu6(self.Wbc(b))
        co = torch.sigmoid(self.Wbo(b) + cc * self.Wco)
        ch = co * F.relu6(cc)
        return ch, cc

    def init_hidden(self, batch_size, hidden, shape):
        if self.Wci is None:
            self.Wci = torch.zeros(1, hidden, shape[0], shape[1])
            self.Wcf = torch.zeros(1, hidden, shape[0], shape[1])
            self.Wco = torch.zeros(1, hidden, shape[0], shape[1])
        return (torch.zeros(batch_size, hidden, shape[0], shape[1]),
                torch.zeros(batch_size, hidden, shape[0], shape[1]))


class BottleneckLSTM(nn.Module):
    def __init__(self, input_channels, hidden_channels, height, width, batch_size):
        super(BottleneckLSTM, self).__init__()
        self.input_channels = int(input_channels)
        self.hidden_channels = int(hidden_channels)
        self.cell = BottleneckLSTMCell(self.input_channels, self.hidden_channels)
        (h, c) = self.cell.init_hidden(batch_size, hidden=self.hidden_channels, shape=(height, width))
        self.hidden_state = h
        self.cell_state = c

    def forward(self, input):
        new_h, new_c = self.cell(input, self.hidden_state, self.cell_state)
        self.hidden_state = new_h
        self.cell_state = new_c
        return self.hidden_state


class MobileVOD(nn.Module):
    def __init__(self, num_classes=3, batch_size=1):
        super().__init__()
        self.pred_encoder = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU6(), nn.Conv2d(8, 8, 3, 2, 1), nn.ReLU6())
        self.bottleneck_lstm1 = BottleneckLSTM(input_channels=8, hidden_channels=8, height=2, width=2,
                                               batch_size=batch_size)
        self.num_classes = num_classes
        self.classification_header = nn.Conv2d(8, 2 * num_classes, 3, padding=1)
        self.regression_header = nn.Conv2d(8, 2 * 4, 3, padding=1)

    def forward(self, x):
        x = self.pred_encoder(x)
        x = self.bottleneck_lstm1(x)
        confidence = self.classification_header(x).permute(0, 2, 3, 1).reshape(x.size(0), -1, self.num_classes)
        location = self.regression_header(x).permute(0, 2, 3, 1).reshape(x.size(0), -1, 4)
        return confidence, location

    def detach_hidden(self):
        self.bottleneck_lstm1.hidden_state.detach_()
        self.bottleneck_lstm1.cell_state.detach_()


def criterion(confidence, locations, label, box):
    classification_loss = F.cross_entropy(confidence.reshape(-1, confidence.size(-1)), label.reshape(-1))
    regression_loss = F.smooth_l1_loss(locations, box)
    return regression_loss, classification_loss


def compute():
    torch.manual_seed(0)
    net = MobileVOD()
    optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-3, momentum=0.9)
    images = torch.randn(1, 2, 1, 3, 8, 8)  # (clips, frames, batch, C, H, W)
    labels = torch.randint(0, 3, (1, 2, 1, 8))
    boxes = torch.randn(1, 2, 1, 8, 4)
    grads = {}
    for i, data in enumerate(zip(images, boxes, labels)):
        images_, boxes_, labels_ = data
        for image, box, label in zip(images_, boxes_, labels_):
            optimizer.zero_grad()
            confidence, locations = net(image)
            regression_loss, classification_loss = criterion(confidence, locations, label, box)
            loss = regression_loss + classification_loss
            loss.backward(retain_graph=True)
            grads = {n: p.grad.clone() for n, p in net.named_parameters()}
            optimizer.step()
            net.detach_hidden()
    return grads  # gradients of the last frame


if __name__ == "__main__":
    compute()
