# reference fix for 430: commit 60a096e ("Fix #96 and #104"), `self.dropout = nn.Dropout2d(p=0.1, inplace=False)`.
import torch
import torch.nn as nn
import torch.nn.functional as F


class conv2DBatchNormRelu(nn.Module):
    def __init__(
        self,
        in_channels,
        n_filters,
        k_size,
        stride,
        padding,
        bias=True,
        dilation=1,
        with_bn=True,
    ):
        super(conv2DBatchNormRelu, self).__init__()

        conv_mod = nn.Conv2d(
            int(in_channels),
            int(n_filters),
            kernel_size=k_size,
            padding=padding,
            stride=stride,
            bias=bias,
            dilation=dilation,
        )

        if with_bn:
            self.cbr_unit = nn.Sequential(
                conv_mod, nn.BatchNorm2d(int(n_filters)), nn.ReLU(inplace=True)
            )
        else:
            self.cbr_unit = nn.Sequential(conv_mod, nn.ReLU(inplace=True))

    def forward(self, inputs):
        outputs = self.cbr_unit(inputs)
        return outputs


class pyramidPooling(nn.Module):
    def __init__(self, in_channels, pool_sizes, model_name="pspnet", fusion_mode="cat", with_bn=True):
        super(pyramidPooling, self).__init__()

        bias = not with_bn

        self.paths = []
        for i in range(len(pool_sizes)):
            self.paths.append(
                conv2DBatchNormRelu(
                    in_channels,
                    int(in_channels / len(pool_sizes)),
                    1,
                    1,
                    0,
                    bias=bias,
                    with_bn=with_bn,
                )
            )

        self.path_module_list = nn.ModuleList(self.paths)
        self.pool_sizes = pool_sizes
        self.model_name = model_name
        self.fusion_mode = fusion_mode

    def forward(self, x):
        h, w = x.shape[2:]

        k_sizes = []
        strides = []
        for pool_size in self.pool_sizes:
            k_sizes.append((int(h / pool_size), int(w / pool_size)))
            strides.append((int(h / pool_size), int(w / pool_size)))

        output_slices = [x]

        for i, (module, pool_size) in enumerate(zip(self.path_module_list, self.pool_sizes)):
            out = F.avg_pool2d(x, k_sizes[i], stride=strides[i], padding=0)
            out = module(out)
            out = F.interpolate(out, size=(h, w), mode="bilinear")
            output_slices.append(out)

        return torch.cat(output_slices, dim=1)


def residualBlockPSP(n_blocks, in_channels, mid_channels, out_channels, stride, dilation=1):
    """Stand-in for the bottleneck stack: same in/out channels, stride and dilation."""
    layers = [conv2DBatchNormRelu(in_channels, out_channels, 3, stride, dilation, False, dilation=dilation)]
    for _ in range(n_blocks - 1):
        layers.append(conv2DBatchNormRelu(out_channels, out_channels, 3, 1, dilation, False, dilation=dilation))
    return nn.Sequential(*layers)


class pspnet(nn.Module):
    def __init__(self, n_classes=5, block_config=[1, 1, 1, 1], w=8):
        super(pspnet, self).__init__()
        self.block_config = block_config
        self.n_classes = n_classes

        # Encoder
        self.convbnrelu1_1 = conv2DBatchNormRelu(
            in_channels=3, k_size=3, n_filters=w, padding=1, stride=2, bias=False
        )
        self.convbnrelu1_2 = conv2DBatchNormRelu(
            in_channels=w, k_size=3, n_filters=w, padding=1, stride=1, bias=False
        )
        self.convbnrelu1_3 = conv2DBatchNormRelu(
            in_channels=w, k_size=3, n_filters=2 * w, padding=1, stride=1, bias=False
        )

        # Vanilla Residual Blocks
        self.res_block2 = residualBlockPSP(self.block_config[0], 2 * w, w, 4 * w, 1, 1)
        self.res_block3 = residualBlockPSP(self.block_config[1], 4 * w, 2 * w, 8 * w, 2, 1)

        # Dilated Residual Blocks
        self.res_block4 = residualBlockPSP(self.block_config[2], 8 * w, 4 * w, 16 * w, 1, 2)
        self.res_block5 = residualBlockPSP(self.block_config[3], 16 * w, 8 * w, 32 * w, 1, 4)

        # Pyramid Pooling Module
        self.pyramid_pooling = pyramidPooling(32 * w, [6, 3, 2, 1])

        # Final conv layers
        self.cbr_final = conv2DBatchNormRelu(64 * w, 4 * w, 3, 1, 1, False)
        self.dropout = nn.Dropout2d(p=0.1, inplace=False)
        self.classification = nn.Conv2d(4 * w, self.n_classes, 1, 1, 0)

        # Auxiliary layers for training
        self.convbnrelu4_aux = conv2DBatchNormRelu(
            in_channels=16 * w, k_size=3, n_filters=2 * w, padding=1, stride=1, bias=False
        )
        self.aux_cls = nn.Conv2d(2 * w, self.n_classes, 1, 1, 0)

    def forward(self, x):
        inp_shape = x.shape[2:]

        # H, W -> H/2, W/2
        x = self.convbnrelu1_1(x)
        x = self.convbnrelu1_2(x)
        x = self.convbnrelu1_3(x)

        # H/2, W/2 -> H/4, W/4
        x = F.max_pool2d(x, 3, 2, 1)

        # H/4, W/4 -> H/8, W/8
        x = self.res_block2(x)
        x = self.res_block3(x)
        x = self.res_block4(x)

        # Auxiliary layers for training
        x_aux = self.convbnrelu4_aux(x)
        x_aux = self.dropout(x_aux)
        x_aux = self.aux_cls(x_aux)

        x = self.res_block5(x)

        x = self.pyramid_pooling(x)

        x = self.cbr_final(x)
        x = self.dropout(x)

        x = self.classification(x)
        x = F.interpolate(x, size=inp_shape, mode="bilinear")

        if self.training:
            return x_aux, x
        else:  # eval mode
            return x


def compute():
    torch.manual_seed(0)
    model = pspnet(n_classes=5, w=4)
    model.train()
    images = torch.randn(2, 3, 48, 48)
    labels = torch.randint(0, 5, (2, 48, 48))
    x_aux, x = model(images)
    x_aux = F.interpolate(x_aux, size=labels.shape[1:], mode="bilinear")
    loss = F.cross_entropy(x, labels) + 0.4 * F.cross_entropy(x_aux, labels)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
