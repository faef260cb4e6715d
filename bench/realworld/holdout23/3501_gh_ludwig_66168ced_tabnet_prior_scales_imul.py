# source: https://github.com/ludwig-ai/ludwig/commit/66168ced09204f337c250953731e2ef172efe47b
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Ludwig (ludwig-ai/ludwig), commit 66168ced "fix: inplace modification run-time error / resolve error that surfaced
# during model parameter update test", inside PR #1376 "TF to Torch Migration of TabNet" (squash-merged as fc6d777b2).
# TabNet.forward keeps `prior_scales` (a plain torch.ones at the start) across the decision steps; each step's
# AttentiveTransformer computes `hidden * prior_scales` (the product saves prior_scales for backward), then TabNet
# relaxes the priors with `prior_scales *= self.relaxation_factor - mask_values`, bumping the version of the tensor
# the product saved, so the training step's backward fails ("... [4, 6]] is at version N; expected version N-1").
# Fix: `prior_scales = prior_scales * (self.relaxation_factor - mask_values)`.
# Library module: 3501helpers_ludwig_tabnet.py (ref: ..._fixed.py): TabNet and its blocks as in the source at the
# fix's parent. Stand-ins here: the combiner around TabNet (a plain TabNet on a random [4, 6] table), the regression
# loss, and one SGD step, in the manner of ludwig's parameter-update test (every parameter gets a gradient).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tabnet_modules = importlib.import_module("3501helpers_ludwig_tabnet")


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
