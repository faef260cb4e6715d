# reference fix for 3501: ludwig commit 66168ced (inside PR #1376) in the library module
# (3501helpers_ludwig_tabnet_fixed.py): `prior_scales = prior_scales * (self.relaxation_factor - mask_values)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tabnet_modules = importlib.import_module("3501helpers_ludwig_tabnet_fixed")


def compute():
    torch.manual_seed(0)
    features = torch.randn(4, 6)
    target = torch.randn(4, 3)
    model = tabnet_modules.TabNet(input_size=6, size=5, output_size=3, num_steps=2, num_total_blocks=2,
                                  num_shared_blocks=1, relaxation_factor=1.5)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    final_output, aggregated_mask, masks = model(features)
    loss = torch.nn.functional.mse_loss(final_output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    out = {"loss": loss.detach(), "aggregated_mask": aggregated_mask.detach()}
    for name, p in model.named_parameters():
        if p.grad is not None:
            out["grad." + name] = p.grad.clone()
        out["after." + name] = p.detach().clone()
    return out


if __name__ == "__main__":
    compute()
