# pyannote.audio (speaker diarization / embeddings) pyannote/audio/models/blocks/basic_block.py as of the parent of
# commit bfb71d95 ("fix runtime error when computing gradient"): BasicBlock, copied (MIT license header shortened).
# The culprit: BasicBlock.forward adds the shortcut in place, `outputs += self.shorcut(input_data)`, on the output
# of F.relu, which ReluBackward saved (its backward reads its own output). No stand-ins.
import torch
from torch import nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    """ A residual block composed of two convolutional layers and one residual
    connection linking the block input to the block output
    """
    expansion = 1

    def __init__(self, inplanes: int, outplanes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(
            inplanes, outplanes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(outplanes)
        self.conv2 = nn.Conv2d(outplanes, outplanes,
                               kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(outplanes)

        self.shorcut = nn.Sequential()
        # Only in the case where dimensions in input and output of this block are
        # different, in order to match these dimensions:
        if stride != 1 or inplanes != self.expansion * outplanes:
            # Convolution layer only used to match dimension between input and
            # output of this block
            self.shorcut = nn.Sequential(nn.Conv2d(inplanes,
                                            self.expansion * outplanes,
                                            kernel_size=1,
                                            stride=stride,
                                            bias=False),
                                            nn.BatchNorm2d(self.expansion * outplanes))

    def forward(self, input_data: torch.Tensor) -> torch.Tensor:
        """
        Parameters
        ----------
        input_data : torch.Tensor
            batch of features with size (batch, channel, sample)
        """
        outputs = F.relu(self.bn1(self.conv1(input_data)))
        outputs = F.relu(self.bn2(self.conv2(outputs)))
        outputs += self.shorcut(input_data)
        outputs = F.relu(outputs)
        return outputs
