# reference fix for 2102: commit bfb71d95 in the library module (2102helpers_pyannote_basic_block_fixed.py):
# `outputs = outputs + self.shorcut(input_data)` out of place.
import importlib
import os
import re
import sys
from typing import List

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
basic_block = importlib.import_module("2102helpers_pyannote_basic_block_fixed")
BasicBlock = basic_block.BasicBlock


class ResNet(nn.Module):
    """Implementation of a modified version of a resnet architecture"""

    def __init__(self, block, num_blocks: List[int], m_channels=32, feat_dim=60, embed_dim=512):
        super().__init__()
        self.inplanes = m_channels
        self.feat_dim = feat_dim
        self.embed_dim = embed_dim
        if block is BasicBlock:
            self.conv1 = nn.Conv2d(
                1, m_channels, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(m_channels)
            self.layer1 = self.__make_layer(
                block, m_channels, num_blocks[0], stride=1)
            self.layer2 = self.__make_layer(
                block, m_channels * 2, num_blocks[1], stride=2)
            current_freq_dim = int((self.feat_dim - 1) / 2) + 1
            self.layer3 = self.__make_layer(
                block, m_channels * 4, num_blocks[2], stride=2)
            current_freq_dim = int((current_freq_dim - 1) / 2) + 1
            self.layer4 = self.__make_layer(
                block, m_channels * 8, num_blocks[3], stride=2)
            current_freq_dim = int((current_freq_dim - 1) / 2) + 1
            self.embedding = nn.Linear(
                m_channels * 8 * 2 * current_freq_dim, embed_dim)
        else:
            raise ValueError()

    def __make_layer(self, block, planes, num_blocks, stride, ) -> nn.Sequential:
        """"""
        strides = [stride] + [1]*(num_blocks - 1)
        layers = []
        for current_stride in strides:
            layers.append(block(self.inplanes, planes, stride=current_stride))
            self.inplanes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, filterbank: torch.Tensor):
        # stand-in: `filterbank = self.sincnet(waveforms)` in the source
        outputs = filterbank.unsqueeze_(1)
        outputs = F.relu(self.bn1(self.conv1(outputs)))
        # To retrieve only layers whose name is of the form "layer1.1" for instance:
        name_filter = re.compile('^layer[0-9]{1,}.[0-9]{1,}$')
        for name, block in [(name, block) for name, block in self.named_modules()
                            if name_filter.match(name)]:
            outputs = block(outputs)
        pooling_mean = torch.mean(outputs, dim=-1)
        meansq = torch.mean(outputs * outputs, dim=-1)
        pooling_std = torch.sqrt(meansq - pooling_mean ** 2 + 1e-10)
        outputs = torch.cat((torch.flatten(pooling_mean, start_dim=1),
                         torch.flatten(pooling_std, start_dim=1)), 1)
        embedding = self.embedding(outputs)
        return embedding


def compute():
    torch.manual_seed(0)
    model = ResNet(BasicBlock, [1, 1, 1, 1], m_channels=4, feat_dim=16, embed_dim=8)
    classifier = nn.Linear(8, 3)  # stand-in for the task's speaker classification head
    params = list(model.parameters()) + list(classifier.parameters())
    optimizer = torch.optim.SGD(params, lr=0.1)
    filterbank = torch.randn(4, 16, 20)
    speakers = torch.tensor([0, 1, 2, 1])

    embedding = model(filterbank)
    loss = F.cross_entropy(classifier(embedding), speakers)
    optimizer.zero_grad()
    loss.backward()
    out = {"model.%s.grad" % k: p.grad.clone() for k, p in model.named_parameters()}
    optimizer.step()
    out.update({"model.%s" % k: p.detach().clone() for k, p in model.named_parameters()})
    out["embedding"] = embedding.detach()
    return out


if __name__ == "__main__":
    compute()
