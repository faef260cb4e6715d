# reference fix for 1109: PR #29563 in the library module (1109helpers_transformers_modeling_mamba_fixed.py): clone the cached initial ssm_state.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
modeling_mamba = importlib.import_module("1109helpers_transformers_modeling_mamba_fixed")


def compute():
    torch.manual_seed(0)
    model = modeling_mamba.MambaForCausalLM(modeling_mamba.MambaConfig())
    model.train()
    input_ids = torch.randint(0, 20, (2, 6))
    loss, logits, cache = model(input_ids, labels=input_ids)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
