# Library module for case 3205 (original): microsoft/archai, tasks/face_segmentation/search_space/hgnet.py at the
# parent of commit dc356bcd ("fix(tasks/segmentation): Hgnet forward pass", 2023-02-01). HourglassNet (stem, downsample
# blocks, skip blocks, upsample blocks built from an ArchConfig; forward) follows the source. In forward the decoder
# adds each upsampled branch into the stored encoder output in place, `out_dict[i-1] += self.up_blocks[i](...)`;
# every block ends with ReluConv2d's ReLU, which saved that output for its backward (the statement at fault).
# Left out: hgnet_param_tree_factory and HgnetSegmentationSearchSpace (the search space that samples configs and
# builds the model); the config machinery is 3205helpers_archai_config.py, the ops 3205helpers_archai_ops.py.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_ops = importlib.import_module("3205helpers_archai_ops")
ReluConv2d = _ops.ReluConv2d
OPS = _ops.OPS


class HourglassNet(nn.Module):
    def __init__(self, arch_config, num_classes: int, in_channels: int = 3, ):
        super().__init__()

        self.num_classes = num_classes
        self.arch_config = arch_config
        self.base_channels = arch_config.pick('base_ch')

        # Classifier
        self.classifier = nn.Conv2d(self.base_channels, num_classes, kernel_size=1)

        # Stem convolution
        self.stem_stride = arch_config.pick('stem_stride')
        self.stem_conv = ReluConv2d(
            in_channels=in_channels, out_channels=self.base_channels,
            stride=self.stem_stride
        )

        self.upsample = nn.UpsamplingBilinear2d(scale_factor=2)
        self.final_upsample = nn.UpsamplingBilinear2d(scale_factor=self.stem_stride)

        # Calculates output channels for each block
        self.chs = [self.base_channels]

        for block_cfg in arch_config.pick('downsample_blocks'):
            self.chs.append(
                int(self.chs[-1] * block_cfg.pick('ch_expansion_factor'))
            )

        self.nb_blocks = len(self.chs) - 1

        # Downsample blocks
        self.down_blocks = nn.ModuleList()
        for block_idx, block_cfg in enumerate(arch_config.pick('downsample_blocks')):
            in_ch, out_ch = self.chs[block_idx], self.chs[block_idx + 1]

            down_block = [
                OPS[layer_cfg.pick('op')](
                    (in_ch if layer_idx == 0 else out_ch),
                    out_ch,
                    stride=(2 if (layer_idx == 0 and block_idx > 0) else 1)
                )
                for layer_idx, layer_cfg in enumerate(block_cfg.pick('layers'))
            ]

            self.down_blocks.append(nn.Sequential(*down_block))

        # Skip blocks
        self.skip_blocks = nn.ModuleList()
        for block_idx, block_cfg in enumerate(arch_config.pick('skip_blocks')):
            out_ch = self.chs[block_idx + 1]

            skip_block = [
                OPS.get(layer_cfg.pick('op'))(out_ch, out_ch)
                for layer_idx, layer_cfg in enumerate(block_cfg.pick('layers'))
            ]

            self.skip_blocks.append(nn.Sequential(*skip_block))

        # Upsample blocks
        self.up_blocks = nn.ModuleList()
        for block_idx, block_cfg in enumerate(arch_config.pick('upsample_blocks')):
            in_ch, out_ch = self.chs[block_idx], self.chs[block_idx + 1]

            up_block = [
                OPS.get(layer_cfg.pick('op'))(
                    (out_ch if layer_idx == 0 else in_ch), in_ch
                )
                for layer_idx, layer_cfg in enumerate(block_cfg.pick('layers'))
            ]

            self.up_blocks.append(nn.Sequential(*up_block))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out_dict = {i: 0 for i in range(self.nb_blocks)}
        inp = self.stem_conv(x)

        for i in range(self.nb_blocks):
            out_dict[i] = self.down_blocks[i](inp)
            inp = out_dict[i]

        for i in range(self.nb_blocks - 1):
            out_dict[i] = self.skip_blocks[i](out_dict[i])

        for i in range(self.nb_blocks)[::-1]:
            inp = out_dict.pop(i)

            if i > 0:
                out_dict[i-1] += self.up_blocks[i](self.upsample(inp))
            else:
                out = self.up_blocks[i](self.final_upsample(inp))

        return self.classifier(out)
