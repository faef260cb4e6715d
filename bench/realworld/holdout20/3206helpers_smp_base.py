# Library module for case 3206 (shared: the fix does not touch it): qubvel/segmentation_models.pytorch at the parent of
# commit 2f001ba, written anew at small size from segmentation_models_pytorch/common/blocks.py (Conv2dReLU: conv,
# BatchNorm inserted at position 1, then `nn.ReLU(inplace=True)`), base/model.py (Model.initialize, PretrainedModel's
# preprocessing attributes), base/encoder_decoder.py (EncoderDecoder: encoder, decoder, activation; forward;
# predict) and encoders/ (ResNetEncoder.forward returning [x4, x3, x2, x1, x0], get_encoder setting `out_shapes`).
# Stand-ins: the encoder's torchvision ResNet body (BasicBlocks, ImageNet weights from model_zoo) is one
# conv-BN-ReLU stage per layer, at 8 / 8 / 16 / 24 / 32 channels ('tiny_resnet', out_shapes (32, 24, 16, 8, 8));
# no pretrained weights (`encoder_weights=None`); PretrainedModel.preprocess_input (numpy) is left out.
import torch
import torch.nn as nn


class Conv2dReLU(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0,
                 stride=1, use_batchnorm=True, **batchnorm_params):

        super().__init__()

        layers = [
            nn.Conv2d(in_channels, out_channels, kernel_size,
                      stride=stride, padding=padding, bias=not (use_batchnorm)),
            nn.ReLU(inplace=True),
        ]

        if use_batchnorm:
            layers.insert(1, nn.BatchNorm2d(out_channels, **batchnorm_params))

        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return self.block(x)


class Model(nn.Module):

    def __init__(self):
        super().__init__()

    def initialize(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)


class PretrainedModel(Model):

    def __init__(self):
        super().__init__()
        self._input_size = None
        self._input_space = None
        self._input_range = None
        self._std = None
        self._mean = None


class EncoderDecoder(PretrainedModel):

    def __init__(self, encoder, decoder, activation):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

        if callable(activation):
            self.activation = activation
        elif activation == 'softmax':
            self.activation = nn.Softmax(dim=1)
        elif activation == 'sigmoid':
            self.activation = nn.Sigmoid()
        else:
            raise ValueError('Activation should be "sigmoid" or "softmax"')

    def forward(self, x):
        x = self.encoder(x)
        x = self.decoder(x)
        return x

    def predict(self, x):
        if self.training:
            self.eval()

        with torch.no_grad():
            x = self.forward(x)
            x = self.activation(x)

        return x


def _stage(in_ch, out_ch, stride):
    return nn.Sequential(nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False),
                         nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True))


class ResNetEncoder(nn.Module):

    def __init__(self, widths=(8, 8, 16, 24, 32)):
        super().__init__()
        self.pretrained = False
        self.conv1 = nn.Conv2d(3, widths[0], 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = _stage(widths[0], widths[1], 1)
        self.layer2 = _stage(widths[1], widths[2], 2)
        self.layer3 = _stage(widths[2], widths[3], 2)
        self.layer4 = _stage(widths[3], widths[4], 2)

    def forward(self, x):
        x0 = self.conv1(x)
        x0 = self.bn1(x0)
        x0 = self.relu(x0)

        x1 = self.maxpool(x0)
        x1 = self.layer1(x1)

        x2 = self.layer2(x1)
        x3 = self.layer3(x2)
        x4 = self.layer4(x3)

        return [x4, x3, x2, x1, x0]


encoders = {
    'tiny_resnet': {
        'encoder': ResNetEncoder,
        'out_shapes': (32, 24, 16, 8, 8),
        'params': {'widths': (8, 8, 16, 24, 32)},
    },
}


def get_encoder(name, encoder_weights=None):

    Encoder = encoders[name]['encoder']
    encoder = Encoder(**encoders[name]['params'])
    encoder.out_shapes = encoders[name]['out_shapes']

    return encoder
