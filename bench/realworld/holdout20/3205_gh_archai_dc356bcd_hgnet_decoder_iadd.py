# source: https://github.com/microsoft/archai/commit/dc356bcd6ac838b2cf5fe059c58802c7402f9a03
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Archai (Microsoft's neural-architecture-search library), its face-segmentation task: the search space samples an
# architecture config and builds an HourglassNet from it (tasks/face_segmentation/search_space/hgnet.py). Every block
# is a stack of ReluConv2d ops (conv, BatchNorm, ReLU). In forward, the decoder adds each upsampled branch into the
# stored encoder output in place, `out_dict[i-1] += self.up_blocks[i](self.upsample(inp))`; that output is the last
# ReLU's result, which ReLU saved for its backward, so training a sampled candidate raises "one of the variables
# needed for gradient computation has been modified by an inplace operation" (ReluBackward0) at loss.backward(),
# whatever the sampled ops. Commit dc356bcd ("fix(tasks/segmentation): Hgnet forward pass") rewrites forward to build
# the decoder output out of place: `output = branches.pop(i-1) + self.up_blocks[i](self.upsample(output))`.
# The library modules are 3205helpers_archai_hgnet.py (ref: ..._fixed.py), 3205helpers_archai_ops.py and
# 3205helpers_archai_config.py; their headers say what was left out.
# Stand-ins here: one sampled config written by hand (the search space's ArchParamTree would sample it: stem stride 2,
# 8 base channels, 4 blocks, one skip block left empty), 3 classes, a batch of 2 RGB 16x16 images with random
# per-pixel labels, one cross-entropy backward and one Adam step; returned: the loss, the logits, gradients of the
# stem, of a decoder block and of the classifier, and the classifier's weight after the step.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
config = importlib.import_module("3205helpers_archai_config")
hgnet = importlib.import_module("3205helpers_archai_hgnet")


def _list(items):
    return {"_config_type": "config_list", "_repeat_times": len(items),
            "_configs": {str(i): item for i, item in enumerate(items)}}


def _layers(*ops):
    return {"layers": _list([{"op": op} for op in ops])}


SAMPLED = {
    "stem_stride": 2,
    "base_ch": 8,
    "downsample_blocks": _list([
        dict(_layers("conv3x3", "conv5x5"), ch_expansion_factor=1.0),
        dict(_layers("conv3x3"), ch_expansion_factor=1.5),
        dict(_layers("conv5x5", "conv3x3"), ch_expansion_factor=1.2),
        dict(_layers("conv3x3"), ch_expansion_factor=1.0),
    ]),
    "skip_blocks": _list([_layers("conv3x3"), _layers(), _layers("conv5x5", "conv3x3")]),
    "upsample_blocks": _list([_layers("conv3x3"), _layers("conv3x3", "conv5x5"), _layers("conv3x3"),
                              _layers("conv5x5")]),
}


def compute():
    torch.manual_seed(0)
    arch_config = config.build_arch_config(SAMPLED)
    model = hgnet.HourglassNet(arch_config, num_classes=3)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    x = torch.randn(2, 3, 16, 16)
    y = torch.randint(0, 3, (2, 16, 16))
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    out = {
        "loss": loss.detach(),
        "logits": logits.detach(),
        "stem.weight.grad": model.stem_conv.conv.weight.grad.clone(),
        "up1.weight.grad": model.up_blocks[1][0].conv.weight.grad.clone(),
        "classifier.weight.grad": model.classifier.weight.grad.clone(),
    }
    optimizer.step()
    out["classifier.weight.after_step"] = model.classifier.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
