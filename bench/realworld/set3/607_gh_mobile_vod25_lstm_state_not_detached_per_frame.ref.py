# reference fix for 607 (from the thread): net.detach_hidden() inside the per-frame loop, after optimizer.step()
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


def SeperableConv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0):
    return nn.Sequential(
        nn.Conv2d(in_channels=int(in_channels), out_channels=int(in_channels), kernel_size=kernel_size,
                  groups=int(in_channels), stride=stride, padding=padding),
        nn.ReLU6(),
        nn.Conv2d(in_channels=int(in_channels), out_channels=int(out_channels), kernel_size=1),
    )


def conv_bn(inp, oup, stride):
    return nn.Sequential(
        nn.Conv2d(int(inp), int(oup), 3, stride, 1, bias=False),
        nn.BatchNorm2d(int(oup)),
        nn.ReLU6(inplace=True)
    )


def conv_dw(inp, oup, stride):
    return nn.Sequential(
        nn.Conv2d(int(inp), int(inp), 3, stride, 1, groups=int(inp), bias=False),
        nn.BatchNorm2d(int(inp)),
        nn.ReLU6(inplace=True),
        nn.Conv2d(int(inp), int(oup), 1, 1, 0, bias=False),
        nn.BatchNorm2d(int(oup)),
        nn.ReLU6(inplace=True),
    )


class BottleneckLSTMCell(nn.Module):
    def __init__(self, input_channels, hidden_channels):
        super(BottleneckLSTMCell, self).__init__()
        assert hidden_channels % 2 == 0
        self.input_channels = int(input_channels)
        self.hidden_channels = int(hidden_channels)
        self.num_features = 4
        self.W = nn.Conv2d(in_channels=self.input_channels, out_channels=self.input_channels, kernel_size=3,
                           groups=self.input_channels, stride=1, padding=1)
        self.Wy = nn.Conv2d(int(self.input_channels + self.hidden_channels), self.hidden_channels, kernel_size=1)
        self.Wi = nn.Conv2d(self.hidden_channels, self.hidden_channels, 3, 1, 1, groups=self.hidden_channels, bias=False)
        self.Wbi = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbf = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbc = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbo = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.relu = nn.ReLU6()
        self.Wci = None
        self.Wcf = None
        self.Wco = None

    def forward(self, x, h, c):
        x = self.W(x)
        y = torch.cat((x, h), 1)
        i = self.Wy(y)
        b = self.Wi(i)
        ci = torch.sigmoid(self.Wbi(b) + c * self.Wci)
        cf = torch.sigmoid(self.Wbf(b) + c * self.Wcf)
        cc = cf * c + ci * self.relu(self.Wbc(b))
        co = torch.sigmoid(self.Wbo(b) + cc * self.Wco)
        ch = co * self.relu(cc)
        return ch, cc

    def init_hidden(self, batch_size, hidden, shape):
        if self.Wci is None:
            self.Wci = Variable(torch.zeros(1, hidden, shape[0], shape[1]))
            self.Wcf = Variable(torch.zeros(1, hidden, shape[0], shape[1]))
            self.Wco = Variable(torch.zeros(1, hidden, shape[0], shape[1]))
        return (Variable(torch.zeros(batch_size, hidden, shape[0], shape[1])),
                Variable(torch.zeros(batch_size, hidden, shape[0], shape[1])))


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


class MobileNetV1(nn.Module):
    def __init__(self, num_classes=1024, alpha=1):
        super(MobileNetV1, self).__init__()
        self.model = nn.Sequential(
            conv_bn(3, 32 * alpha, 2),
            conv_dw(32 * alpha, 64 * alpha, 1),
            conv_dw(64 * alpha, 128 * alpha, 2),
            conv_dw(128 * alpha, 128 * alpha, 1),
            conv_dw(128 * alpha, 256 * alpha, 2),
            conv_dw(256 * alpha, 256 * alpha, 1),
            conv_dw(256 * alpha, 512 * alpha, 2),
            conv_dw(512 * alpha, 512 * alpha, 1),
        )

    def forward(self, x):
        return self.model(x)


class SSD(nn.Module):
    def __init__(self, num_classes, batch_size, alpha=1, is_test=False):
        super(SSD, self).__init__()
        self.is_test = is_test
        self.num_classes = num_classes
        self.conv13 = conv_dw(512 * alpha, 1024 * alpha, 2)
        self.bottleneck_lstm1 = BottleneckLSTM(input_channels=1024 * alpha, hidden_channels=256 * alpha, height=10,
                                               width=10, batch_size=batch_size)
        self.fmaps_1 = nn.Sequential(
            nn.Conv2d(in_channels=int(256 * alpha), out_channels=int(128 * alpha), kernel_size=1),
            nn.ReLU6(inplace=True),
            SeperableConv2d(in_channels=128 * alpha, out_channels=256 * alpha, kernel_size=3, stride=2, padding=1),
        )
        self.regression_headers = nn.ModuleList([
            SeperableConv2d(in_channels=512 * alpha, out_channels=6 * 4, kernel_size=3, padding=1),
            SeperableConv2d(in_channels=256 * alpha, out_channels=6 * 4, kernel_size=3, padding=1),
            SeperableConv2d(in_channels=256 * alpha, out_channels=6 * 4, kernel_size=3, padding=1),
        ])
        self.classification_headers = nn.ModuleList([
            SeperableConv2d(in_channels=512 * alpha, out_channels=6 * num_classes, kernel_size=3, padding=1),
            SeperableConv2d(in_channels=256 * alpha, out_channels=6 * num_classes, kernel_size=3, padding=1),
            SeperableConv2d(in_channels=256 * alpha, out_channels=6 * num_classes, kernel_size=3, padding=1),
        ])

    def compute_header(self, i, x):
        confidence = self.classification_headers[i](x)
        confidence = confidence.permute(0, 2, 3, 1).contiguous()
        confidence = confidence.view(confidence.size(0), -1, self.num_classes)
        location = self.regression_headers[i](x)
        location = location.permute(0, 2, 3, 1).contiguous()
        location = location.view(location.size(0), -1, 4)
        return confidence, location

    def forward(self, x):
        confidences = []
        locations = []
        header_index = 0
        confidence, location = self.compute_header(header_index, x)
        header_index += 1
        confidences.append(confidence)
        locations.append(location)
        x = self.conv13(x)
        x = self.bottleneck_lstm1(x)
        confidence, location = self.compute_header(header_index, x)
        header_index += 1
        confidences.append(confidence)
        locations.append(location)
        x = self.fmaps_1(x)
        confidence, location = self.compute_header(header_index, x)
        header_index += 1
        confidences.append(confidence)
        locations.append(location)
        confidences = torch.cat(confidences, 1)
        locations = torch.cat(locations, 1)
        return confidences, locations


class MobileVOD(nn.Module):
    def __init__(self, pred_enc, pred_dec):
        super(MobileVOD, self).__init__()
        self.pred_encoder = pred_enc
        self.pred_decoder = pred_dec

    def forward(self, seq):
        x = self.pred_encoder(seq)
        confidences, locations = self.pred_decoder(x)
        return confidences, locations

    def detach_hidden(self):
        self.pred_decoder.bottleneck_lstm1.hidden_state.detach_()
        self.pred_decoder.bottleneck_lstm1.cell_state.detach_()


class MultiboxLoss(nn.Module):
    """Stand-in for network/multibox_loss.py (no priors / hard negative mining)."""

    def forward(self, confidence, predicted_locations, labels, gt_locations):
        classification_loss = F.cross_entropy(confidence.reshape(-1, confidence.size(2)), labels.reshape(-1))
        regression_loss = F.smooth_l1_loss(predicted_locations, gt_locations)
        return regression_loss, classification_loss


def train(loader, net, criterion, optimizer, sequence_length=2):
    net.train(True)
    running_loss = 0.0
    grads = {}
    for i, data in enumerate(loader):
        images, boxes, labels = data
        for image, box, label in zip(images, boxes, labels):
            optimizer.zero_grad()
            confidence, locations = net(image)
            regression_loss, classification_loss = criterion(confidence, locations, label, box)
            loss = regression_loss + classification_loss
            loss.backward(retain_graph=True)
            grads = {n: p.grad.clone() for n, p in net.named_parameters() if p.grad is not None}
            optimizer.step()
            running_loss += loss.item()
            net.detach_hidden()
    net.detach_hidden()
    return grads


def compute():
    torch.manual_seed(0)
    alpha, num_classes, batch_size, seq_len = 1 / 16, 4, 1, 2
    pred_enc = MobileNetV1(num_classes=num_classes, alpha=alpha)
    pred_dec = SSD(num_classes=num_classes, batch_size=batch_size, alpha=alpha, is_test=False)
    net = MobileVOD(pred_enc, pred_dec)
    criterion = MultiboxLoss()
    optimizer = torch.optim.RMSprop([{'params': [p for n, p in net.pred_encoder.named_parameters()], 'lr': 0.003},
                                     {'params': [p for n, p in net.pred_decoder.named_parameters()], 'lr': 0.003}],
                                    lr=0.003, momentum=0.9, weight_decay=5e-4)
    num_priors = 6 * (20 * 20 + 10 * 10 + 5 * 5)
    images = torch.randn(seq_len, batch_size, 3, 320, 320)
    boxes = 0.1 * torch.randn(seq_len, batch_size, num_priors, 4)
    labels = torch.randint(0, num_classes, (seq_len, batch_size, num_priors))
    loader = [(images, boxes, labels)]  # one clip of seq_len consecutive frames
    grads = train(loader, net, criterion, optimizer, sequence_length=seq_len)
    return grads  # gradients of the last frame


if __name__ == "__main__":
    compute()
