# reference fix for 801: PR #6, `out = out + residual` in ResEncoder.forward.
import torch
import torch.nn as nn
import torch.nn.functional as F


def downsample():
    return nn.MaxPool2d(kernel_size=2, stride=2)


def deconv(in_channels, out_channels):
    return nn.ConvTranspose2d(in_channels, out_channels, kernel_size=2, stride=2)


class ResEncoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ResEncoder, self).__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = out + residual
        out = self.relu(out)
        return out


class Decoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(Decoder, self).__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.conv(x)


class ChannelAttentionBlock(nn.Module):
    def __init__(self, in_channels):
        super(ChannelAttentionBlock, self).__init__()
        self.gamma = nn.Parameter(torch.zeros(1))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        B, C, H, W = x.size()
        proj_query = x.view(B, C, -1)
        proj_key = x.view(B, C, -1).permute(0, 2, 1)
        affinity = torch.matmul(proj_query, proj_key)
        affinity_new = torch.max(affinity, -1, keepdim=True)[0].expand_as(affinity) - affinity
        affinity_new = self.softmax(affinity_new)
        proj_value = x.view(B, C, -1)
        weights = torch.matmul(affinity_new, proj_value)
        weights = weights.view(B, C, H, W)
        return self.gamma * weights + x


class CSNet(nn.Module):
    def __init__(self, classes, channels):
        super(CSNet, self).__init__()
        self.enc_input = ResEncoder(channels, 4)
        self.encoder1 = ResEncoder(4, 8)
        self.encoder2 = ResEncoder(8, 16)
        self.downsample = downsample()
        self.cab = ChannelAttentionBlock(16)
        self.decoder2 = Decoder(16, 8)
        self.decoder1 = Decoder(8, 4)
        self.deconv2 = deconv(16, 8)
        self.deconv1 = deconv(8, 4)
        self.final = nn.Conv2d(4, classes, kernel_size=1)

    def forward(self, x):
        enc_input = self.enc_input(x)
        down1 = self.downsample(enc_input)
        enc1 = self.encoder1(down1)
        down2 = self.downsample(enc1)
        input_feature = self.encoder2(down2)
        attention_fuse = input_feature + self.cab(input_feature)
        up2 = self.deconv2(attention_fuse)
        up2 = torch.cat((enc1, up2), dim=1)
        dec2 = self.decoder2(up2)
        up1 = self.deconv1(dec2)
        up1 = torch.cat((enc_input, up1), dim=1)
        dec1 = self.decoder1(up1)
        return torch.sigmoid(self.final(dec1))


def compute():
    torch.manual_seed(0)
    net = CSNet(classes=1, channels=1)
    x = torch.randn(2, 1, 16, 16)
    mask = (torch.rand(2, 1, 16, 16) > 0.7).float()
    pred = net(x)
    loss = F.binary_cross_entropy(pred, mask)
    loss.backward()
    return {n: p.grad for n, p in net.named_parameters()}


if __name__ == "__main__":
    compute()
