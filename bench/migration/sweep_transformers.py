"""Sweep cases over transformers: every model type of a chosen set of model folders, built from its
default config shrunk to a tiny one (hidden 32, 2 layers, 2 heads, 4 experts, vocab 512, images
32x32), run in train mode with fixed cotangents and one AdamW step (``cases.train_step``); and the
image processors of those folders over a fixed random image.

The shrinking is generic (no per-model tuning): a model whose tiny config does not build or run
fails the same way in every copy ("both fail"), which the report counts apart.
"""

from __future__ import annotations

from typing import Dict, List

import torch

from migration.cases import seed, train_step

SIZE = {"hidden_size": 32, "d_model": 32, "n_embd": 32, "embed_dim": 32, "encoder_hidden_dim": 32, "hidden_dim": 32,
        "out_hidden_size": 32, "projection_dim": 32, "text_hidden_size": 32, "vision_hidden_size": 32, "d_inner": 32,
        "word_embed_proj_dim": 32, "embedding_size": 32, "proj_dim": 32, "decoder_hidden_size": 32,
        "codebook_dim": 32}
INTER = {"intermediate_size": 40, "ffn_dim": 40, "encoder_ffn_dim": 40, "decoder_ffn_dim": 40, "d_ff": 40,
         "moe_intermediate_size": 16, "n_inner": 40, "shared_expert_intermediate_size": 16, "dim_feedforward": 40,
         "decoder_intermediate_size": 40}  # multiples of 4 floats: grouped_mm wants 16-byte strides
LAYERS = {"num_hidden_layers": 2, "num_layers": 2, "n_layer": 2, "encoder_layers": 2, "decoder_layers": 2, "depth": 2,
          "num_decoder_layers": 2, "num_encoder_layers": 2, "n_layers": 2, "first_k_dense_replace": 1}
HEADS = {"num_attention_heads": 2, "n_head": 2, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
         "num_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
         "v_head_dim": 16, "kv_lora_rank": 16, "q_lora_rank": 16, "qk_head_dim": 16, "attention_head_dim": 16,
         "decoder_num_attention_heads": 2, "num_kv_heads": 1}
EXPERTS = {"num_experts": 4, "n_routed_experts": 4, "num_local_experts": 4, "num_experts_per_tok": 2, "n_group": 2,
           "topk_group": 1, "moe_num_experts": 4, "moe_k": 2, "top_k": 2}
IMAGE = {"image_size": 32, "patch_size": 8}
ALL = {**SIZE, **INTER, **LAYERS, **HEADS, **EXPERTS, **IMAGE}
VOCAB = 512


def shrink(d: dict, version: int = 1) -> dict:
    """A default config's dict made tiny (recursively into sub-configs). Version 2 (the ``tf2``
    cases, for model types version 1 does not build) also follows what validators ask: rope
    sections summing to half a head, per-layer dicts and lists cut to the layer count, as many
    key/value heads as heads, backbone channels feeding the encoder."""
    out = {}
    for key, value in d.items():
        if isinstance(value, dict) and ("model_type" in value or key.endswith("_config")):
            out[key] = shrink(value, version)
        elif isinstance(value, bool) or value is None:
            out[key] = value
        elif key in ALL and isinstance(value, int):
            out[key] = ALL[key]
        elif key == "vocab_size" and isinstance(value, int):
            out[key] = min(value, VOCAB)
        elif (key.endswith("_token_id") or key.endswith("_token_index")) and isinstance(value, int) and value >= VOCAB:
            out[key] = VOCAB - 1 - (hash(key) % 64)
        elif key in ("depths",) and isinstance(value, list):
            out[key] = [1] * len(value)
        elif key in ("hidden_sizes", "embed_dims", "dims") and isinstance(value, list):
            out[key] = [16 * (i + 1) for i in range(len(value))]
        elif key in ("num_heads", "num_attention_heads") and isinstance(value, list):
            out[key] = [1] * len(value)
        else:
            out[key] = value
    layers = next((out[k] for k in LAYERS if k in out and k != "first_k_dense_replace"), None)
    for key, value in d.items():  # per-layer lists follow the layer count (keep the kinds they mix)
        if key.endswith("layer_types") and isinstance(value, list) and layers and len(value) > layers:
            kinds = list(dict.fromkeys(value))
            out[key] = (kinds + value)[:layers] if len(kinds) <= layers else value[:layers]
    if "out_features" in out or "out_indices" in out:  # backbones: the stages a tiny one has
        out.pop("out_features", None)
        out.pop("out_indices", None)
    if "qk_rope_head_dim" in out and "head_dim" in out:  # MLA attention: rope over head_dim
        out["head_dim"] = out["qk_rope_head_dim"]
    if version >= 2:
        _validated(out, layers)
    return out


def _validated(out: dict, layers) -> None:
    half = (out.get("qk_rope_head_dim") or out.get("head_dim") or 16) // 2
    for key in ("rope_parameters", "rope_scaling"):
        rope = out.get(key)
        if isinstance(rope, dict) and "mrope_section" not in rope and rope.get("rope_type") == "default" and key == "rope_parameters":
            rope = dict(rope, mrope_section=[0, 0, 0])  # models with a default section in code (qwen2-vl)
        if isinstance(rope, dict) and isinstance(rope.get("mrope_section"), list) and len(rope["mrope_section"]) == 3:
            out[key] = dict(rope, mrope_section=[half - 2 * (half // 3), half // 3, half // 3])
    if "num_key_value_heads" in out and isinstance(out.get("num_attention_heads"), int):
        out["num_key_value_heads"] = out["num_attention_heads"]
    for key, value in list(out.items()):
        if not layers:
            break
        if isinstance(value, dict) and value and all(isinstance(k, int) or (isinstance(k, str) and k.isdigit()) for k in value):
            out[key] = {k: v for k, v in value.items() if int(k) < layers}
        elif isinstance(value, list) and len(value) > layers and (key.endswith(("_per_layer", "_layers")) or "per_layer" in key):
            out[key] = [v if not isinstance(v, int) or isinstance(v, bool) or v < layers else layers - 1 for v in value[:layers]]
    backbone = out.get("backbone_config")
    if isinstance(backbone, dict) and isinstance(backbone.get("hidden_sizes"), list):
        sizes = backbone["hidden_sizes"]
        for key in ("encoder_in_channels",):
            if isinstance(out.get(key), list):
                out[key] = sizes[-len(out[key]):]
        for key in ("decoder_in_channels",):
            if isinstance(out.get(key), list):
                out[key] = [out.get("d_model", 32)] * len(out[key])


WIDTH_WORDS = ("size", "dim", "dims", "channel", "channels", "filters", "hidden", "width", "units", "sizes", "features")
NOT_WIDTH = ("vocab", "position", "image", "patch", "max_", "length", "window", "sampling", "rate", "bins", "kernel",
             "stride", "num_", "token", "batch", "chunk", "codebook_size", "frames", "seq", "pool", "crop", "resolution",
             "grid", "sample_size", "samples", "step", "buckets", "label", "ratios", "n_fft", "hop", "win", "input_size", "spatial")
SCALE = 16


def scaled_widths(d: dict) -> dict:
    """Version 4 (for the model classes versions 1-3 leave over the parameter cap): every width
    the names of version 1 do not know (``emb_dim``, ``num_filters``... any int or list of ints
    under a key ending in a width word and not naming a count, a length or an image size)
    divided by the same factor, so ratios between widths (heads, groups, 4x MLPs) survive; any
    ``*vocab*`` count capped like ``vocab_size``; ``*groups`` (group norms) scaled too. Recursively into sub-configs."""
    out = {}
    for key, value in d.items():
        low = key.lower()
        widthy = low.endswith(WIDTH_WORDS) and not any(w in low for w in NOT_WIDTH)
        if isinstance(value, dict) and ("model_type" in value or key.endswith("_config")):
            out[key] = scaled_widths(value)
        elif isinstance(value, bool) or value is None:
            out[key] = value
        elif "vocab" in low and isinstance(value, int) and not isinstance(value, bool):
            out[key] = min(value, VOCAB)
        elif low.endswith("groups") and isinstance(value, int) and not isinstance(value, bool) and value >= SCALE:
            out[key] = max(1, value // SCALE)  # group norms over the scaled channels
        elif widthy and isinstance(value, int) and value >= 4 * SCALE:
            out[key] = value // SCALE
        elif (widthy and isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
              and min(value) >= 4 * SCALE):
            out[key] = [v // SCALE for v in value]
        else:
            out[key] = value
    return out


def tiny_config(model_type: str, version: int = 1):
    from transformers import AutoConfig
    base = AutoConfig.for_model(model_type)
    return type(base).from_dict(shrink(base.to_dict(), version))


def inputs_for(model, cfg, version: int = 1) -> Dict[str, torch.Tensor]:
    name = getattr(model, "main_input_name", "input_ids")
    gen = torch.Generator().manual_seed(3)
    if name == "input_ids":
        ids = torch.randint(4, 400, (2, 8), generator=gen)
        found = {"input_ids": ids}
        if getattr(cfg, "is_encoder_decoder", False):
            found["decoder_input_ids"] = torch.randint(4, 400, (2, 5), generator=gen)
        return found
    if name == "pixel_values":
        size = getattr(cfg, "image_size", 64 if version >= 2 and hasattr(cfg, "backbone_config") else 32)
        size = size if isinstance(size, int) else 32
        channels = getattr(cfg, "num_channels", 3)
        return {"pixel_values": torch.randn(2, channels, size, size, generator=gen)}
    if name == "input_values":
        return {"input_values": torch.randn(2, 800, generator=gen)}
    if name == "input_features":
        return {"input_features": torch.randn(2, getattr(cfg, "num_mel_bins", 80), 64, generator=gen)}
    raise ValueError(f"no input for main_input_name {name!r}")


def model_case(model_type: str, version: int = 1):
    from transformers import AutoModel
    seed(0)
    cfg = tiny_config(model_type, version)
    for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout", "drop_path_rate"):
        if isinstance(getattr(cfg, key, None), float):
            setattr(cfg, key, 0.0)
    try:
        with torch.device("meta"):  # count first (building a big one for real takes long)
            n = sum(p.numel() for p in AutoModel.from_config(cfg).parameters())
    except Exception:  # some do not build on meta: count the real one
        n = 0
    if n > 3_000_000:
        raise ValueError(f"tiny config still has {n} parameters")
    seed(0)
    model = AutoModel.from_config(cfg)
    n = sum(p.numel() for p in model.parameters())
    if n > 3_000_000:
        raise ValueError(f"tiny config still has {n} parameters")
    inputs = inputs_for(model, cfg, version)
    return train_step(model, lambda m: m(**inputs))


def image_processor_case(folder: str):
    """Every image processor class of a model folder, defaults, over a fixed random image (numpy
    and torch input), returning what it computes."""
    import importlib
    import pkgutil
    import numpy as np
    import transformers
    out = {}
    base = f"transformers.models.{folder}"
    pkg = importlib.import_module(base)
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("image_processing"):
            continue
        mod = importlib.import_module(f"{base}.{info.name}")
        for attr in dir(mod):
            cls = getattr(mod, attr)
            if not (isinstance(cls, type) and attr.endswith("ImageProcessor") or attr.endswith("ImageProcessorFast")
                    or attr.endswith("ImageProcessorPil")) or getattr(cls, "__module__", "") != mod.__name__:
                continue
            rng = np.random.default_rng(0)
            image = (rng.random((40, 48, 3)) * 255).astype(np.uint8)
            try:
                proc = cls()
                got = proc(images=[image], return_tensors="pt")
                out[attr] = {k: v for k, v in dict(got).items() if isinstance(v, torch.Tensor)}
            except Exception as exc:
                out[attr] = f"{type(exc).__name__}: {exc}"[:120]
    return out


def model_types_of(folders: List[str]) -> List[str]:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES, model_type_to_module_name
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES
    wanted = set(folders)
    return [mt for mt in CONFIG_MAPPING_NAMES if model_type_to_module_name(mt) in wanted and mt in MODEL_MAPPING_NAMES]
