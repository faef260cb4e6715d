# Library module for case 2706 (reference: commit 69d68c0 applied, the embedding scaling under no_grad).
# allenai/OLMo, olmo/initialization.py, read at the parent of commit 69d68c0 ("fix regression", 2024-05-24; the same
# change first came as e21df3d "fixes" on a branch). Written anew at small size (not copied): ModuleType, init_weights
# with its arguments, the per-init-function standard deviations, the `scale_emb_init` scaling of embeddings and the
# residual scaling under no_grad follow the source. Stand-ins for what it imports: olmo.util.StrEnum (a str Enum),
# olmo.config.InitFnType (its five members) and olmo.config.ModelConfig (a dataclass with only the fields read here,
# with the library's defaults).
import math
from dataclasses import dataclass
from enum import Enum
from typing import Optional

import torch
import torch.nn as nn


class StrEnum(str, Enum):
    def __str__(self):
        return self.value


class InitFnType(StrEnum):
    mitchell = "mitchell"
    normal = "normal"
    kaiming_normal = "kaiming_normal"
    fan_in = "fan_in"
    full_megatron = "full_megatron"


@dataclass
class ModelConfig:
    d_model: int = 768
    n_layers: int = 12
    init_fn: InitFnType = InitFnType.normal
    init_std: float = 0.02
    emb_init_std: Optional[float] = None
    init_cutoff_factor: Optional[float] = None
    scale_emb_init: bool = False
    scale_logits: bool = False


class ModuleType(StrEnum):
    in_module = "in"
    out_module = "out"
    emb = "emb"
    final_out = "final_out"


def _megatron_std(config, type_of_module):
    if type_of_module == ModuleType.in_module:
        return config.init_std
    if type_of_module == ModuleType.out_module:
        return config.init_std / math.sqrt(2.0 * config.n_layers)
    if type_of_module == ModuleType.emb:
        return config.emb_init_std if config.emb_init_std is not None else config.init_std
    if type_of_module == ModuleType.final_out:
        return config.d_model ** -0.5
    raise RuntimeError(f"Unknown module type '{type_of_module}'")


def init_weights(config, module, d=None, layer_id=None, std_factor=1.0, type_of_module=None):
    d = config.d_model if d is None else d
    if config.init_fn == InitFnType.normal:
        std = config.init_std * std_factor
        if config.init_cutoff_factor is None:
            nn.init.normal_(module.weight, mean=0.0, std=std)
        else:
            c = config.init_cutoff_factor * std
            nn.init.trunc_normal_(module.weight, mean=0.0, std=std, a=-c, b=c)
    elif config.init_fn in (InitFnType.mitchell, InitFnType.fan_in):
        std = std_factor / math.sqrt(d)
        if config.init_fn == InitFnType.fan_in:
            nn.init.normal_(module.weight, mean=0.0, std=std)
        else:
            if layer_id is not None:
                std = std / math.sqrt(2 * (layer_id + 1))
            nn.init.trunc_normal_(module.weight, mean=0.0, std=std, a=-3 * std, b=3 * std)
    elif config.init_fn == InitFnType.kaiming_normal:
        nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
    elif config.init_fn == InitFnType.full_megatron:
        if type_of_module is None:
            raise RuntimeError("full_megatron init needs a module type")
        cutoff = 3 if config.init_cutoff_factor is None else config.init_cutoff_factor
        std = _megatron_std(config, type_of_module)
        nn.init.trunc_normal_(module.weight, mean=0.0, std=std, a=-cutoff * std, b=cutoff * std)
    else:
        raise NotImplementedError(config.init_fn)

    if config.scale_emb_init and type_of_module == ModuleType.emb:
        with torch.no_grad():
            module.weight.mul_(math.sqrt(config.d_model))


    if isinstance(module, nn.Linear):
        if module.bias is not None:
            nn.init.zeros_(module.bias)
        if config.init_fn == InitFnType.normal and getattr(module, "_is_residual", False):
            with torch.no_grad():
                module.weight.div_(math.sqrt(2 * config.n_layers))
