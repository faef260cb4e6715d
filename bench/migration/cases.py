"""The model families and helpers run in each library copy (inside a worker process whose
``PYTHONPATH`` points at one copy). Every case is a zero-argument function returning what it
leaves behind: outputs, gradients, the model after one optimizer step (parameters and buffers),
optimizer state, mutated inputs. Models are tiny and seeded; cotangents are fixed float64.
"""

from __future__ import annotations

import random
from typing import Callable, Dict, List

import torch


def _torchvision_imports() -> None:
    """The only torchvision wheel for this torch is a CUDA build, whose ``import`` fails next to
    CPU torch (``operator torchvision::nms does not exist``: its fake kernels register for
    compiled ops that are absent). Registering those fakes is skipped where it fails (the
    real-code note's shim), the same in every copy; nothing else changes."""
    import torch.library as L
    if getattr(L.register_fake, "_migration_shim", False):
        return
    original = L.register_fake

    def register_fake(op, fn=None, /, **kw):
        def deco(f):
            try:
                return original(op, **kw)(f)
            except Exception:
                return f
        return deco if fn is None else deco(fn)
    register_fake._migration_shim = True
    L.register_fake = register_fake


_torchvision_imports()

CASES: Dict[str, Callable[[], object]] = {}
FAMILY, HELPER = "family", "helper"
KIND: Dict[str, str] = {}


def case(kind: str, *names: str):
    def register(fn):
        for name in names or (fn.__name__,):
            CASES[name] = (lambda n=name: fn(n)) if names else fn
            KIND[name] = kind
        return fn
    return register


def seed(n: int = 0) -> None:
    torch.manual_seed(n)
    random.seed(n)
    try:
        import numpy as np
        np.random.seed(n)
    except ImportError:
        pass


def floats(obj) -> List[torch.Tensor]:
    """The floating-point tensors of a model output, in a stable order."""
    if isinstance(obj, torch.Tensor):
        return [obj] if obj.is_floating_point() else []
    if hasattr(obj, "to_tuple"):
        obj = obj.to_tuple()
    if isinstance(obj, dict):
        return [t for k in sorted(obj) for t in floats(obj[k])]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in floats(item)]
    return []


def train_step(model: torch.nn.Module, forward: Callable[[torch.nn.Module], object]) -> dict:
    """Forward in train mode, backward with fixed float64 cotangents, one AdamW step (the
    installed torch's, which no copy rewrites): outputs, gradients, the model after the step
    and the optimizer state."""
    model.train()
    seed(1)
    outputs = floats(forward(model))
    gen = torch.Generator().manual_seed(2)
    loss = sum((t.double() * torch.randn(t.shape, generator=gen, dtype=torch.float64)).sum() for t in outputs)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1, foreach=False)
    opt.step()
    return {"outputs": [t.detach() for t in outputs], "grads": grads, "after_step": model, "opt": opt}


# ---- transformers -----------------------------------------------------------------------------

@case(FAMILY, "hf_bert", "hf_gpt2", "hf_llama", "hf_t5", "hf_vit", "hf_big_bird", "hf_wav2vec2", "hf_hubert",
      "hf_wavlm", "hf_sew_d", "hf_wav2vec2_conformer", "hf_swin2sr")
def transformers_family(name: str):
    import transformers as T
    name = name[3:]
    seed(0)
    common = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)
    ids = {"input_ids": torch.randint(0, 99, (2, 7))}
    if name == "bert":
        model, inputs = T.BertModel(T.BertConfig(**common)), ids
    elif name == "gpt2":
        model, inputs = T.GPT2LMHeadModel(T.GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=4)), ids
    elif name == "llama":
        model, inputs = T.LlamaForCausalLM(T.LlamaConfig(**common, num_key_value_heads=2)), ids
    elif name == "t5":
        model = T.T5ForConditionalGeneration(T.T5Config(vocab_size=99, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=4,
                                                        decoder_start_token_id=0, pad_token_id=0))
        inputs = {**ids, "labels": torch.randint(0, 99, (2, 5))}
    elif name == "vit":
        model = T.ViTModel(T.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                                       image_size=16, patch_size=4))
        inputs = {"pixel_values": torch.randn(2, 3, 16, 16)}
    elif name == "big_bird":
        model = T.BigBirdModel(T.BigBirdConfig(**common, attention_type="block_sparse", block_size=4, num_random_blocks=2,
                                               max_position_embeddings=128))
        inputs = {"input_ids": torch.randint(0, 99, (2, 64))}
    elif name == "swin2sr":
        model = T.Swin2SRForImageSuperResolution(T.Swin2SRConfig(image_size=16, patch_size=1, embed_dim=12, depths=[2],
                                                                  num_heads=[2], window_size=4, upscale=2))
        inputs = {"pixel_values": torch.randn(1, 3, 16, 16)}
    else:
        speech = {"wav2vec2": "Wav2Vec2", "hubert": "Hubert", "wavlm": "WavLM", "sew_d": "SEWD",
                  "wav2vec2_conformer": "Wav2Vec2Conformer"}[name]
        cfg = getattr(T, f"{speech}Config")(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                                           conv_dim=(8, 8), conv_stride=(5, 4), conv_kernel=(10, 8),
                                           num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=2, mask_time_prob=0.0)
        model, inputs = getattr(T, f"{speech}Model")(cfg), {"input_values": torch.randn(2, 400)}
    return train_step(model, lambda m: m(**inputs))


# ---- torchvision ------------------------------------------------------------------------------

@case(FAMILY, "tv_resnet18", "tv_mobilenet_v3_small", "tv_efficientnet_b0", "tv_vit", "tv_convnext_tiny")
def torchvision_family(name: str):
    import torchvision.models as M
    name = name[3:]
    seed(0)
    if name == "vit":
        model = M.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32, num_classes=10)
    elif name == "convnext_tiny":
        model = M.convnext_tiny(num_classes=10, stochastic_depth_prob=0.2)
    elif name == "efficientnet_b0":
        model = M.efficientnet_b0(num_classes=10, stochastic_depth_prob=0.2)
    else:
        model = getattr(M, name)(num_classes=10)
    x = torch.randn(2, 3, 32, 32)
    return train_step(model, lambda m: m(x))


# ---- timm -------------------------------------------------------------------------------------

TIMM = {
    "timm_vit_ls_droppath": ("vit_tiny_patch16_224", dict(img_size=32, patch_size=8, depth=2, drop_path_rate=0.2, init_values=1e-5)),
    "timm_convnext_atto": ("convnext_atto", dict(drop_path_rate=0.2, ls_init_value=1e-6)),
    "timm_efficientnet_b0": ("efficientnet_b0", dict(drop_path_rate=0.2)),
    "timm_resnet18d": ("resnet18d", dict(drop_path_rate=0.2)),
    "timm_beit": ("beit_base_patch16_224", dict(img_size=32, patch_size=8, depth=2, embed_dim=32, num_heads=2, drop_path_rate=0.2, init_values=0.1)),
    "timm_swin": ("swin_tiny_patch4_window7_224", dict(img_size=32, patch_size=4, window_size=4, embed_dim=16, depths=(1, 1), num_heads=(1, 2), drop_path_rate=0.2)),
}


@case(FAMILY, *TIMM)
def timm_family(name: str):
    import timm
    arch, kwargs = TIMM[name]
    seed(0)
    model = timm.create_model(arch, pretrained=False, num_classes=10, **kwargs)
    x = torch.randn(2, 3, 32, 32)
    return train_step(model, lambda m: m(x))


# ---- diffusers, x-transformers, kornia --------------------------------------------------------

@case(FAMILY)
def diffusers_unet2d():
    from diffusers import UNet2DModel
    seed(0)
    model = UNet2DModel(sample_size=8, in_channels=3, out_channels=3, layers_per_block=1, block_out_channels=(8, 16),
                        norm_num_groups=4, down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                        up_block_types=("AttnUpBlock2D", "UpBlock2D"), attention_head_dim=4)
    x, t = torch.randn(2, 3, 8, 8), torch.tensor([3, 7])
    return train_step(model, lambda m: m(x, t).sample)


@case(FAMILY)
def diffusers_vae_tiled():
    from diffusers import AutoencoderKL
    seed(0)
    model = AutoencoderKL(block_out_channels=(8, 16), down_block_types=("DownEncoderBlock2D",) * 2,
                          up_block_types=("UpDecoderBlock2D",) * 2, latent_channels=4, norm_num_groups=4, sample_size=16)
    model.enable_tiling()
    model.tile_sample_min_size, model.tile_latent_min_size, model.tile_overlap_factor = 16, 8, 0.25
    x = torch.randn(1, 3, 40, 40)

    def forward(m):
        latent = m.encode(x).latent_dist.mode()
        return [latent, m.decode(latent).sample]
    return train_step(model, forward)


@case(FAMILY)
def x_transformers_decoder():
    from x_transformers import Decoder, TransformerWrapper
    seed(0)
    model = TransformerWrapper(num_tokens=20, max_seq_len=8, attn_layers=Decoder(dim=16, depth=2, heads=2, rotary_pos_emb=True,
                                                                                  ff_glu=True, attn_dropout=0.1, ff_dropout=0.1))
    ids = torch.randint(0, 20, (2, 8))
    return train_step(model, lambda m: m(ids))


@case(FAMILY)
def kornia_ops():
    import kornia
    seed(0)
    img = torch.rand(2, 3, 16, 16, requires_grad=True)
    angle = torch.tensor([10.0, -20.0], requires_grad=True)
    hsv = kornia.color.rgb_to_hsv(img)
    blurred = kornia.filters.gaussian_blur2d(img, (5, 5), (1.5, 1.5))
    rotated = kornia.geometry.transform.rotate(blurred, angle)
    edges = kornia.filters.sobel(rotated)
    lab = kornia.color.rgb_to_lab(img.clamp(0, 1))
    outputs = [hsv, blurred, rotated, edges, lab]
    gen = torch.Generator().manual_seed(2)
    sum((t.double() * torch.randn(t.shape, generator=gen, dtype=torch.float64)).sum() for t in outputs).backward()
    return {"outputs": outputs, "img": img, "angle": angle}


# ---- helpers that mutate on purpose -----------------------------------------------------------

@case(HELPER)
def timm_init_helpers():
    """Init helpers fill their argument and are called for that effect (return value ignored)."""
    from timm.layers import lecun_normal_, trunc_normal_, trunc_normal_tf_, variance_scaling_
    out = {}
    for name, fn in [("trunc_normal_", lambda t: trunc_normal_(t, std=0.02)), ("trunc_normal_tf_", lambda t: trunc_normal_tf_(t, std=0.02)),
                     ("variance_scaling_", lambda t: variance_scaling_(t, 2.0, "fan_in", "truncated_normal")),
                     ("variance_scaling_uniform", lambda t: variance_scaling_(t, 1.0, "fan_avg", "uniform")),
                     ("lecun_normal_", lecun_normal_)]:
        seed(0)
        t = torch.nn.Parameter(torch.empty(128, 64))
        fn(t)  # return value ignored, as callers do
        out[name] = {"tensor": t, "mean": t.detach().mean().item(), "std": t.detach().std().item()}
    seed(0)
    import timm
    model = timm.create_model("vit_tiny_patch16_224", img_size=32, patch_size=8, depth=1, num_classes=10)
    out["vit_init_std"] = model.blocks[0].attn.qkv.weight.detach().std().item()
    return out


@case(HELPER)
def timm_mixup_cutmix():
    from timm.data import Mixup
    out = {}
    for mode in ("batch", "pair", "elem"):
        for mix, cut in ((0.8, 0.0), (0.0, 1.0), (0.8, 1.0)):
            seed(0)
            fn = Mixup(mixup_alpha=mix, cutmix_alpha=cut, mode=mode, num_classes=5, label_smoothing=0.1)
            x = torch.randn(4, 3, 8, 8)
            target = torch.tensor([0, 1, 2, 3])
            ret = fn(x, target)
            out[f"{mode}_mixup{int(mix * 10)}_cutmix{int(cut * 10)}"] = {"images": x, "returned": ret}
    return out


@case(HELPER)
def timm_model_ema():
    from timm.utils import ModelEmaV2, ModelEmaV3
    try:
        from timm.utils import ModelEma
    except ImportError:
        ModelEma = None
    out = {}
    makers = {"v2": lambda m: ModelEmaV2(m, decay=0.9), "v3": lambda m: ModelEmaV3(m, decay=0.9, foreach=False),
              "v3_foreach": lambda m: ModelEmaV3(m, decay=0.9, foreach=True),
              "v3_warmup": lambda m: ModelEmaV3(m, decay=0.99, use_warmup=True, foreach=False)}
    if ModelEma is not None:
        makers["v1"] = lambda m: ModelEma(m, decay=0.9)
    for name, make in makers.items():
        seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
        ema = make(model)
        for step in range(3):
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(torch.randn_like(p))
                model(torch.randn(5, 4))  # moves BatchNorm's running stats
            if name.startswith("v3"):
                ema.update(model, step=step)
            else:
                ema.update(model)
        out[name] = ema.ema if name == "v1" else ema.module
    return out


@case(HELPER)
def diffusers_blend():
    from diffusers import AutoencoderKL
    seed(0)
    vae = AutoencoderKL(block_out_channels=(8,), norm_num_groups=4, latent_channels=4)
    a, b = torch.randn(1, 4, 6, 6), torch.randn(1, 4, 6, 6)
    b_v, b_h = b.clone(), b.clone()
    rv = vae.blend_v(a, b_v, 3)
    rh = vae.blend_h(a, b_h, 3)
    return {"b_v": b_v, "b_h": b_h, "returned_v": rv, "returned_h": rh}


def tiny_model():
    seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def optimizer_steps(model, opt, steps=3):
    x = torch.randn(5, 6)
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    return {"model": model, "opt": opt}


TORCH_OPTIMS = {
    "SGD": ("sgd", dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
    "Adam": ("adam", dict(lr=0.01, amsgrad=True, weight_decay=0.01)),
    "AdamW": ("adamw", dict(lr=0.01, weight_decay=0.1)),
    "RAdam": ("radam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1)),
    "NAdam": ("nadam", dict(lr=0.01, weight_decay=0.1)),
    "Adagrad": ("adagrad", dict(lr=0.1, weight_decay=0.01)),
    "RMSprop": ("rmsprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
    "Adamax": ("adamax", dict(lr=0.01, weight_decay=0.01)),
    "ASGD": ("asgd", dict(lr=0.01, weight_decay=0.01, t0=1)),
    "Adadelta": ("adadelta", dict(lr=1.0, weight_decay=0.01)),
    "Rprop": ("rprop", dict(lr=0.01)),
}


@case(HELPER)
def torch_optim_kernels():
    """torch.optim's single-tensor and foreach kernels (module-level functions), from the copy."""
    import importlib
    out = {}
    for cls, (module, kwargs) in TORCH_OPTIMS.items():
        for foreach in (False, True):
            model = tiny_model()
            opt = getattr(importlib.import_module(f"torch_optim_copy.{module}"), cls)(model.parameters(), foreach=foreach, **kwargs)
            out[f"{cls}_foreach{int(foreach)}"] = optimizer_steps(model, opt)
    return out


TIMM_OPTIMS = ("sgd", "momentum", "sgdw", "sgdp", "adamw", "adamp", "nadamw", "radam", "lamb", "lambc", "lars", "larc",
               "lion", "adabelief", "adan", "adopt", "laprop", "mars", "madgrad", "novograd", "rmsproptf", "adafactor",
               "adafactorbv", "muon")  # adahessian needs create_graph; kron compiles (20+ s)


@case(HELPER)
def timm_optimizers():
    from timm.optim import create_optimizer_v2
    out = {}
    for name in TIMM_OPTIMS:
        for foreach in (False, True):
            model = tiny_model()
            try:
                opt = create_optimizer_v2(model, name, lr=0.01, weight_decay=0.01, foreach=foreach)
            except TypeError:
                if foreach:
                    continue
                opt = create_optimizer_v2(model, name, lr=0.01, weight_decay=0.01)
            except Exception as exc:  # not available in this timm (or needs an extra package)
                out[f"{name}_unavailable"] = type(exc).__name__
                break
            try:
                out[f"{name}_foreach{int(foreach)}"] = optimizer_steps(model, opt)
            except Exception as exc:
                out[f"{name}_foreach{int(foreach)}_error"] = f"{type(exc).__name__}: {exc}"[:200]
    return out
