# FIXED by PR #63 (commit 5857af8): a forward hook installs a tensor hook on the layer's output instead of the full
# backward hook ("this approach breaks down if the output of a layer feeds into an activation with `inplace=True`").
# Otherwise as 1402helpers_singd_optimizer.py: singd/optim/optimizer.py, the hook machinery of SINGD, where before
# the fix `_install_hooks` puts a forward pre-hook (`_save_input`) and a *full backward hook*
# (`_accumulate_H_terms`) on every supported layer. Stand-ins (marked): `SINGDStandIn` keeps only that machinery
# (one parameter group, T=1, loss_average="batch"); `process_input` / `process_grad_output` reduced to the "expand"
# KFAC approximation for Conv2d / Linear; the structured matrices K, C and `K.from_inner` replaced by the plain
# Kronecker factors H_K = a^T a, H_C = g^T g accumulated in dicts; grad scaling and the update step dropped.
from typing import Dict, List, Tuple

from functools import partial

import torch
import torch.nn.functional as F
from torch import Tensor, is_grad_enabled
from torch.nn import Conv2d, Linear, Module
from torch.utils.hooks import RemovableHandle


def process_input(a: Tensor, module: Module, kfac_approx: str) -> Tensor:
    # stand-in: unfold convolution inputs, append a 1 for the bias
    if isinstance(module, Conv2d):
        a = F.unfold(a, module.kernel_size, module.dilation, module.padding, module.stride)  # (N, C*k*k, L)
        a = a.transpose(1, 2).flatten(end_dim=-2)
    if module.bias is not None:
        a = torch.cat([a, a.new_ones(a.shape[0], 1)], dim=1)
    return a


def process_grad_output(g: Tensor, module: Module, loss_average: str, kfac_approx: str) -> Tensor:
    # stand-in: spatial positions become rows, scaled by the batch size for a batch-averaged loss
    batch_size = g.shape[0]
    if isinstance(module, Conv2d):
        g = g.flatten(start_dim=2).transpose(1, 2).flatten(end_dim=-2)
    if loss_average == "batch":
        g = g * batch_size
    return g


class SINGDStandIn:
    SUPPORTED_MODULES = (Linear, Conv2d)

    def __init__(self, model: Module, T: int = 1, loss_average: str = "batch", kfac_approx: str = "expand"):
        self.param_groups = [{"params": [p for p in model.parameters()], "T": T, "loss_average": loss_average,
                              "kfac_approx": kfac_approx}]
        self.steps = 0
        self.inputs: Dict[str, Tensor] = {}
        self.H_Ks: Dict[str, Tensor] = {}
        self.H_Cs: Dict[str, Tensor] = {}
        self.module_names, self.hook_handles = self._install_hooks(model)

    def _get_param_group_entry(self, module: Module, key: str):
        return self.param_groups[0][key]

    def _save_input(self, module: Module, inputs: Tuple[Tensor]):
        """Internally store input of a layer if triggered by update frequency.

        Saves the input to `self.inputs`.
        """
        T = self._get_param_group_entry(module, "T")
        if is_grad_enabled() and self.steps % T == 0:
            module_name = self.module_names[module]
            self.inputs[module_name] = inputs[0].data

    def _register_tensor_hook_on_output_to_accumulate_H_terms(
        self, module: Module, inputs: Tuple[Tensor], output: Tensor
    ):
        """Register a tensor hook on the module's output that accumulates the H terms.

        This function can be used as a `forward_hook`.
        """
        T = self._get_param_group_entry(module, "T")
        if self.steps % T == 0:
            tensor_hook = partial(self._accumulate_H_terms, module)
            output.register_hook(tensor_hook)

    def _accumulate_H_terms(self, module: Module, grad_output: Tensor):
        """Accumulate the current mini-batch's contribution to `H_K, H_C` for a layer.

        Requires that the layer inputs have been stored in `self.inputs`.
        """
        loss_average = self._get_param_group_entry(module, "loss_average")
        kfac_approx = self._get_param_group_entry(module, "kfac_approx")
        module_name = self.module_names[module]

        # 1) PROCESS INPUTS AND GRAD_OUTPUTS
        a = self.inputs.pop(module_name)
        a = process_input(a, module, kfac_approx)

        g = grad_output.data
        g = process_grad_output(g, module, loss_average, kfac_approx)

        # 2) Update H_K, H_C (stand-in: plain Kronecker factors)
        H_K = a.T @ a
        H_C = g.T @ g
        self.H_Ks[module_name] = self.H_Ks.get(module_name, 0) + H_K
        self.H_Cs[module_name] = self.H_Cs.get(module_name, 0) + H_C

    def _install_hooks(
        self, model: Module
    ) -> Tuple[Dict[Module, str], List[RemovableHandle]]:
        """Install hooks on supported modules to accumulate pre-conditioner quantities."""
        param_ids = [
            p.data_ptr() for group in self.param_groups for p in group["params"]
        ]
        module_names = {
            mod: name
            for (name, mod) in model.named_modules()
            if isinstance(mod, self.SUPPORTED_MODULES)
            and any(p.data_ptr() in param_ids for p in mod.parameters())
        }
        handles = []
        for module in module_names:
            handles.extend(
                (
                    module.register_forward_pre_hook(self._save_input),
                    module.register_forward_hook(
                        self._register_tensor_hook_on_output_to_accumulate_H_terms
                    ),
                )
            )
        return module_names, handles
