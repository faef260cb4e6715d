# reference fix for 3205: archai commit dc356bcd in the library module (3205helpers_archai_hgnet_fixed.py):
# HourglassNet.forward builds the decoder output out of place.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
config = importlib.import_module("3205helpers_archai_config")
hgnet = importlib.import_module("3205helpers_archai_hgnet_fixed")


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
