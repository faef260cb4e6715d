"""Sweep cases that call library *functions* directly (``fn:<group>``): the helpers many
transformers modeling files define one copy each of, where most of the unreached rewritten spots
sit (issue 24's reach). A model case reaches a helper only when its config, inputs and mode take
that path (labels given, denoising in training, a linear-attention layer); calling every copy of
the helper on small seeded inputs, with gradients where it takes them, reaches them all at once.

Every copy of a helper is found by its definition's text in the imported library copy, so a
case covers the files of whichever copy (original, safe, unsafe) its process imports. A copy that
fails records its error as a note: the same in every copy unless the rewrite changed something.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re
from typing import Callable, Dict, List

import torch

from migration import cases
from migration.cases import seed

GROUPS: Dict[str, Callable[[], dict]] = {}


def group(name: str):
    def register(fn):
        GROUPS[name] = fn
        return fn
    return register


def case(name: str) -> dict:
    return GROUPS[name]()


def definers(function: str, files: str = "modeling_*.py") -> List[str]:
    """Modules of the imported transformers copy's models (files named like ``files``) whose text
    defines ``function`` at module level (sorted: one order in every copy)."""
    import transformers
    root = pathlib.Path(transformers.__file__).parent
    pattern = re.compile(rf"^def {re.escape(function)}\(", re.M)
    found = []
    for path in sorted((root / "models").rglob(files)):
        if pattern.search(path.read_text(encoding="utf-8")):
            found.append("transformers." + ".".join(path.relative_to(root).with_suffix("").parts))
    return found


def each(function: str, call: Callable[[Callable], object], files: str = "modeling_*.py") -> dict:
    """``call(fn)`` for every copy of ``function``, seeded alike, by module name."""
    out = {}
    for module in definers(function, files):
        seed(0)
        try:
            out[module] = call(getattr(importlib.import_module(module), function))
        except Exception as exc:  # a failure is a result too
            out[module] = f"{type(exc).__name__}: {exc}"[:100]
    return out


def grad_run(fn, *inputs: torch.Tensor) -> dict:
    """``fn`` on inputs requiring grad (floats), backward with fixed float64 cotangents."""
    xs = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    outputs = cases.floats(fn(*xs))
    gen = torch.Generator().manual_seed(2)
    wanted = [t for t in outputs if t.requires_grad]
    if wanted:
        sum((t.double() * torch.randn(t.shape, generator=gen, dtype=torch.float64)).sum() for t in wanted).backward()
    return {"outputs": [t.detach() for t in outputs], "inputs": xs}


# ---- seq2seq label shifting (labels given without decoder inputs) ---------------------------------

@group("shift_tokens_right")
def _shift_tokens_right() -> dict:
    ids = torch.tensor([[5, 6, -100, 7, 2], [9, -100, -100, 2, 1]])

    def call(fn):
        n = len(inspect.signature(fn).parameters)
        args = (1, 0) if n >= 3 else (1,)
        try:
            return {"ids": fn(ids.clone(), *args), "input": ids}
        except IndexError:  # (batch, codebooks, length): MusicGen's
            codes = torch.stack([ids, ids.flip(-1)], 1)
            return {"ids": fn(codes.clone(), *args), "input": codes}
    return each("shift_tokens_right", call)


# ---- linear attention kernels (gated delta rule, Kimi delta attention) -----------------------------

def _delta_inputs(heads_k: int = 2, heads_v: int = 2, length: int = 6, dim: int = 4):
    gen = torch.Generator().manual_seed(5)
    q = torch.randn(1, length, heads_k, dim, generator=gen)
    k = torch.randn(1, length, heads_k, dim, generator=gen)
    v = torch.randn(1, length, heads_v, dim, generator=gen)
    g = -torch.rand(1, length, heads_v, generator=gen)
    beta = torch.rand(1, length, heads_v, generator=gen)
    return q, k, v, g, beta


@group("delta_rule")
def _delta_rule() -> dict:
    out = {}
    q, k, v, g, beta = _delta_inputs()
    state = torch.randn(1, 2, 4, 4, generator=torch.Generator().manual_seed(6))
    kimi = (q, k, v, g[..., None].expand(-1, -1, -1, 4) * 0.5, beta)  # a decay per channel
    for name, inputs in (("torch_chunk_gated_delta_rule", (q, k, v, g, beta)), ("chunk_kimi_delta_attention", kimi)):
        for norm in (False, True):
            out[f"{name}.{norm}"] = each(name, lambda fn, norm=norm, inputs=inputs: grad_run(
                lambda *x: fn(*x[:5], chunk_size=4, initial_state=x[5], output_final_state=True,
                              use_qk_l2norm_in_kernel=norm), *inputs, state))
    for name, inputs in (("torch_recurrent_gated_delta_rule", (q, k, v, g, beta)), ("recurrent_kimi_delta_attention", kimi)):
        for norm in (False, True):
            out[f"{name}.{norm}"] = each(name, lambda fn, norm=norm, inputs=inputs: grad_run(
                lambda *x: fn(*x[:5], initial_state=x[5], output_final_state=True, use_qk_l2norm_in_kernel=norm),
                *inputs, state))
    # grouped value heads (num_v_heads a multiple of num_k_heads) and no initial state
    q, k, v, g, beta = _delta_inputs(heads_k=1, heads_v=2, length=5)
    out["gqa"] = each("torch_chunk_gated_delta_rule", lambda fn: grad_run(
        lambda *x: fn(*x, chunk_size=4, output_final_state=True), q, k, v, g, beta))
    return out


# ---- DETR-family training: contrastive denoising groups ---------------------------------------------

@group("denoising")
def _denoising() -> dict:
    targets = [{"class_labels": torch.tensor([1, 3]), "boxes": torch.tensor([[0.5, 0.5, 0.2, 0.3], [0.3, 0.6, 0.1, 0.2]])},
               {"class_labels": torch.tensor([2]), "boxes": torch.tensor([[0.4, 0.4, 0.3, 0.3]])}]

    def call(fn):
        seed(0)
        embed = torch.nn.Embedding(5, 8)
        seed(3)
        got = fn(targets, 4, 6, embed, num_denoising_queries=8, label_noise_ratio=0.5, box_noise_scale=1.0)
        query_class, query_bbox, mask, meta = got
        loss = query_class.double().sum() + (query_bbox.double() ** 2).sum()
        loss.backward()
        return {"class": query_class.detach(), "bbox": query_bbox.detach(), "mask": mask, "meta": meta,
                "embed": embed}
    return each("get_contrastive_denoising_training_group", call)


# ---- panoptic post-processing (image processors) ----------------------------------------------------

@group("segments")
def _segments() -> dict:
    gen = torch.Generator().manual_seed(7)
    masks = torch.rand(3, 6, 6, generator=gen)
    scores = torch.tensor([0.9, 0.8, 0.7])
    labels = torch.tensor([1, 2, 1])

    given = {"mask_probs": masks, "pred_scores": scores, "pred_labels": labels, "stuff_classes": {2},
             "label_ids_to_fuse": {1}, "mask_threshold": 0.5, "overlap_mask_area_threshold": 0.3, "target_size": (6, 6)}

    def call(fn):
        params = inspect.signature(fn).parameters
        seg, info = fn(**{k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in given.items() if k in params})
        return {"seg": seg, "info": [{k: v for k, v in d.items()} for d in info]}
    out = {}
    for files in ("modeling_*.py", "image_processing_*.py", "video_processing_*.py"):  # the processors' copies
        out.update(each("compute_segments", call, files))
    return out


# ---- logits processors on the branches the plain ``lp:`` case does not take -------------------------

@group("logits_edges")
def _logits_edges() -> dict:
    """First and last steps (forced BOS / EOS), a 1-d prompt (repetition penalty), a decay already
    started, encoder n-grams, top-h, Bark's early stop, alternating codebooks, Dia's EOS channel."""
    from transformers import generation as G
    from transformers.generation import logits_process as L
    ids = torch.tensor([[1, 5, 6, 7, 5, 6], [2, 3, 9, 9, 4, 1]])
    made = {
        "forced_bos": (lambda: G.ForcedBOSTokenLogitsProcessor(2), ids[:, :1]),
        "forced_eos": (lambda: G.ForcedEOSTokenLogitsProcessor(7, 3), ids),
        "exp_decay": (lambda: G.ExponentialDecayLengthPenalty((1, 1.5), 3, 2), ids),
        "rep_1d": (lambda: G.RepetitionPenaltyLogitsProcessor(1.3), ids[0]),
        "top_h": (lambda: L.TopHLogitsWarper(0.5), ids),
        "enc_ngram": (lambda: L.EncoderNoRepeatNGramLogitsProcessor(2, torch.tensor([[5, 6, 7], [9, 4, 1]])), ids),
        "bark_eos": (lambda: L.BarkEosPrioritizerLogitsProcessor(3, 0.01), ids),
        "codebooks": (lambda: L.AlternatingCodebooksLogitsProcessor(2, 8, 6), ids),
        "codebooks_odd": (lambda: L.AlternatingCodebooksLogitsProcessor(1, 8, 6), ids),
        "dia_eos": (lambda: L.DiaEOSChannelFilterLogitsProcessor(2, 3), ids),
    }
    out = {}
    for name, (make_p, given) in made.items():
        seed(0)
        scores = torch.randn(2, 20) if given.dim() > 1 else torch.randn(1, given.numel(), 20)  # packed: (1, T, V)
        scores_in = scores.clone()
        try:
            got = make_p()(given, scores)
            out[name] = {"scores_after": scores, "returned": got, "scores_in": scores_in}
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"[:100]
    return out


# ---- small helpers: time-series masking, Kaiser filters, COCO annotations, multimodal block ids -----

def _diffusers_each(function: str, modules: List[str], call: Callable[[Callable], object]) -> dict:
    out = {}
    for module in modules:
        seed(0)
        try:
            out[module] = call(getattr(importlib.import_module(module), function))
        except Exception as exc:
            out[module] = f"{type(exc).__name__}: {exc}"[:100]
    return out


@group("helpers")
def _helpers() -> dict:
    import numpy as np
    gen = torch.Generator().manual_seed(9)
    series = torch.randn(2, 3, 4, 5, generator=gen)  # (batch, channels, patches, patch length)
    out = {
        "random_masking": each("random_masking", lambda fn: {
            "plain": fn(series.clone(), 0.4), "channels": fn(series.clone(), 0.5, [1], True, -1)}),
        "forecast_masking": each("forecast_masking", lambda fn: {
            "int": fn(series.clone(), 2), "list": fn(series.clone(), [1, 2], [0], -1)}),
        "kaiser": each("kaiser_sinc_filter1d", lambda fn: {"even": fn(0.25, 0.3, 8), "odd": fn(0.2, 0.3, 7),
                                                            "zero": fn(0.0, 0.3, 6)}),
        "kaiser_diffusers": _diffusers_each("kaiser_sinc_filter1d", [
            "diffusers.pipelines.ltx2.vocoder", "diffusers.models.autoencoders.autoencoder_kl_minimax_h3_audio",
            "diffusers.models.autoencoders.mmaudio_vocoder"], lambda fn: {"even": fn(0.25, 0.3, 8), "odd": fn(0.2, 0.3, 7)}),
        "block_ids": each("get_block_sequence_ids_for_mask", lambda fn: fn(
            torch.tensor([[0, 1, 1, 0, 2, 2, 2, 0], [1, 1, 0, 0, 0, 2, 0, 1]]), torch.device("cpu"))),
    }
    image = np.zeros((3, 20, 30), dtype=np.float32)
    target = {"image_id": 7, "annotations": [
        {"bbox": [2.0, 3.0, 10.0, 8.0], "category_id": 1, "area": 80.0, "iscrowd": 0,
         "segmentation": [[2.0, 3.0, 12.0, 3.0, 12.0, 11.0, 2.0, 11.0]]},
        {"bbox": [5.0, 5.0, 0.0, 4.0], "category_id": 2, "area": 0.0, "iscrowd": 0,
         "segmentation": [[5.0, 5.0, 6.0, 5.0, 6.0, 9.0]]}]}

    def coco(fn):
        try:
            got = fn(image, target, return_segmentation_masks=True, input_data_format="channels_first")
        except Exception as exc:  # no pycocotools: the boxes alone
            got = {"masks_note": f"{type(exc).__name__}"[:40],
                   **fn(image, target, return_segmentation_masks=False, input_data_format="channels_first")}
        return {k: (torch.as_tensor(v) if isinstance(v, np.ndarray) else v) for k, v in got.items()}
    for files in ("image_processing_*.py",):
        out["coco"] = each("prepare_coco_detection_annotation", coco, files)
    try:  # torchvision: rotated boxes to corners and back
        from torchvision import tv_tensors
        from torchvision.transforms.v2 import functional as TF
        rboxes = torch.tensor([[10.0, 12.0, 6.0, 4.0, 30.0], [5.0, 5.0, 2.0, 8.0, -45.0]])
        made = {}
        for fmt in ("XYXYXYXY", "CXCYWHR"):
            made[fmt] = TF.convert_bounding_box_format(rboxes.clone(), old_format=tv_tensors.BoundingBoxFormat.XYWHR,
                                                       new_format=getattr(tv_tensors.BoundingBoxFormat, fmt))
        made["back"] = TF.convert_bounding_box_format(made["XYXYXYXY"].clone(), old_format=tv_tensors.BoundingBoxFormat.XYXYXYXY,
                                                      new_format=tv_tensors.BoundingBoxFormat.XYWHR)
        inplace_in = rboxes.clone()
        made["inplace"] = TF.convert_bounding_box_format(inplace_in, old_format=tv_tensors.BoundingBoxFormat.XYWHR,
                                                         new_format=tv_tensors.BoundingBoxFormat.CXCYWHR, inplace=True)
        made["inplace_input_after"] = inplace_in
        out["tv_rotated"] = made
    except Exception as exc:
        out["tv_rotated"] = f"{type(exc).__name__}: {exc}"[:100]
    return out


# ---- multimodal rotary position ids (Qwen-VL-style get_rope_index), on a bare model object -----------

def _bare(cls):
    """An instance of a model class with its default config and no layers: what ``get_rope_index``
    reads (``self.config``, the class's other position helpers), without building the model."""
    obj = cls.__new__(cls)
    torch.nn.Module.__init__(obj)
    obj.config = cls.config_class()
    return obj


def _token(config, *names, default=None):
    for holder in (config, getattr(config, "text_config", None)):
        for name in names:
            value = getattr(holder, name, None) if holder is not None else None
            if isinstance(value, int):
                return value
    return default


def each_method(method: str, call: Callable[[type], object]) -> dict:
    """``call(cls)`` for every model class of the imported transformers copy that defines
    ``method`` itself (sorted by module and class: one order in every copy)."""
    import transformers
    root = pathlib.Path(transformers.__file__).parent
    out = {}
    for path in sorted((root / "models").rglob("modeling_*.py")):
        text = path.read_text(encoding="utf-8")
        if f"def {method}(" not in text:
            continue
        module = importlib.import_module("transformers." + ".".join(path.relative_to(root).with_suffix("").parts))
        for cls_name in sorted(re.findall(r"^class (\w+)\(", text, re.M)):
            cls = getattr(module, cls_name, None)
            if cls is None or method not in vars(cls) or not hasattr(cls, "config_class"):
                continue
            seed(0)
            try:
                out[f"{module.__name__}.{cls_name}"] = call(cls)
            except Exception as exc:
                out[f"{module.__name__}.{cls_name}"] = f"{type(exc).__name__}: {exc}"[:100]
    return out


@group("rope_index")
def _rope_index() -> dict:
    return each_method("get_rope_index", _rope_case)


@group("rope_index_unmasked")
def _rope_index_unmasked() -> dict:
    """The same without an attention mask (generation's first step, a batch without padding):
    the branch that writes each row's positions whole."""
    return each_method("get_rope_index", lambda cls: _rope_case(cls, masked=False))


@group("bare_methods")
def _bare_methods() -> dict:
    """Speech models' frame masks from a padded attention mask; T5-style label shifting."""
    mask = torch.ones(2, 4000, dtype=torch.long)
    mask[1, 2500:] = 0

    def frames(cls):
        obj = _bare(cls)
        length = int(obj._get_feat_extract_output_lengths(torch.tensor(4000)))
        return obj._get_feature_vector_attention_mask(length, mask.clone())

    def shift(cls):
        obj = _bare(cls)
        if getattr(obj.config, "decoder_start_token_id", None) is None:
            obj.config.decoder_start_token_id = 0
        if getattr(obj.config, "pad_token_id", None) is None:
            obj.config.pad_token_id = 0
        return obj._shift_right(torch.tensor([[5, 6, -100, 7], [8, -100, -100, 1]]))
    return {"frames": each_method("_get_feature_vector_attention_mask", frames),
            "shift_right": each_method("_shift_right", shift)}


def _rope_case(cls, masked: bool = True) -> dict:
    obj = _bare(cls)
    cfg = obj.config
    image = _token(cfg, "image_token_id", "image_token_index", default=151655)
    video = _token(cfg, "video_token_id", "video_token_index", default=151656)
    start = _token(cfg, "vision_start_token_id", default=151652)
    image_ids = [5, start, image, image, image, image, 7, 8]
    video_ids = [5, start, video, video, video, video, 9, 1]
    types = [0, 0, 1, 1, 1, 1, 0, 0]
    params = inspect.signature(cls.get_rope_index).parameters
    got = {}
    kinds = (("image", image_ids, 1, False), ("image_pad", image_ids, 1, True), ("video", video_ids, 2, False))
    for name, ids, kind, pad in (kinds if masked else (kinds[0], kinds[2])):
        input_ids = torch.tensor([ids, [3] + ids[:-1]] if pad else [ids, ids])
        mask = torch.ones_like(input_ids)
        if pad:
            mask[1, 0] = 0
        given = {"input_ids": input_ids, "mm_token_type_ids": torch.tensor([types, [0] + types[:-1]]) * (kind if kind == 1 else 1) * (2 if kind == 2 else 1),
                 "attention_mask": mask if masked else None}
        grid = torch.tensor([[1, 4, 4], [1, 4, 4]])
        given["image_grid_thw" if kind == 1 else "video_grid_thw"] = grid
        if "second_per_grid_ts" in params and kind == 2:
            given["second_per_grid_ts"] = torch.tensor([1.0, 1.0])
        try:
            got[name] = cls.get_rope_index(obj, **{k: v for k, v in given.items() if k in params})
        except Exception as exc:
            got[name] = f"{type(exc).__name__}: {exc}"[:100]
    return got


# ---- timm helpers: relative positions, masks, collation, targets, activations, metrics -----------

def _call(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"[:100]


@group("timm_helpers")
def _timm_helpers() -> dict:
    """timm's module-level helpers that model cases reach only with options they do not set
    (class tokens, pretrained window sizes, boolean masks, uint8 collation of tensors, numpy
    arrays and tuples of them, multi-label targets), called directly; the activations with
    gradients."""
    from timm.data import loader, naflex_mixup, target_transforms
    from timm.layers import activations, attention, interpolate, lambda_layer, pos_embed_rel
    from timm.task import evaluator
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(3, 5, generator=gen)
    out = {
        "hard_swish": grad_run(activations.hard_swish, x),
        "hard_sigmoid": grad_run(activations.hard_sigmoid, x) if hasattr(activations, "hard_sigmoid") else None,
        "mask_bool": _call(attention.resolve_self_attn_mask, 4, torch.zeros(1, 2, 4, 4),
                           torch.tensor([[True, True, False, True]]).expand(4, 4)),
        "mask_causal": _call(attention.resolve_self_attn_mask, 4, torch.zeros(1, 2, 4, 4), None, True),
        "rel_pos": _call(lambda_layer.rel_pos_indices, 3),
        "rel_index": _call(pos_embed_rel.gen_relative_position_index, (3, 4)),
        "rel_index_cls": _call(pos_embed_rel.gen_relative_position_index, (3, 3), class_token=True),
        "log_coords": _call(pos_embed_rel.gen_relative_log_coords, (4, 4)),
        "log_coords_pre": _call(pos_embed_rel.gen_relative_log_coords, (4, 4), (3, 3)),
        "log_coords_cr": _call(pos_embed_rel.gen_relative_log_coords, (4, 4), mode="cr"),
        "lookup": _call(pos_embed_rel.generate_lookup_tensor, 5),
        "lookup_max": _call(pos_embed_rel.generate_lookup_tensor, 5, 3),
        "ap": _call(evaluator._average_precision_columns, torch.tensor([[0.9, 0.1], [0.5, 0.5], [0.5, 0.7], [0.2, 0.3]]),
                    torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])),
        "multilabel": _call(target_transforms.MultiLabelTarget(6), [1, 4]),
        "multilabel_dense": _call(target_transforms.MultiLabelTarget(3, dense=True), [0.0, 1.0, 0.5]),
        "pair_mixup": _call(naflex_mixup.pairwise_mixup_target, torch.tensor([0, 2, 1]), {0: 1, 1: 0}, [0.7, 0.4, 1.0],
                            num_classes=3, smoothing=0.1),
    }
    images = [torch.randint(0, 255, (3, 4, 4), generator=gen, dtype=torch.uint8) for _ in range(3)]
    out["collate_tensors"] = _call(loader.fast_collate, [(im, i) for i, im in enumerate(images)])
    out["collate_numpy"] = _call(loader.fast_collate, [(im.numpy(), i) for i, im in enumerate(images)])
    out["collate_tuples"] = _call(loader.fast_collate, [((im, images[0]), i) for i, im in enumerate(images)])
    out["collate_np_tuples"] = _call(loader.fast_collate, [((im.numpy(), images[1].numpy()), i) for i, im in enumerate(images)])
    points = [torch.linspace(0, 1, 4), torch.linspace(0, 2, 5)]
    values = torch.randn(4, 5, generator=gen)
    out["grid_interp"] = _call(lambda: interpolate.RegularGridInterpolator(points, values)(
        [torch.tensor([0.1, 0.5, 0.99]), torch.tensor([0.3, 1.9, 0.0])]))
    return out


# ---- diffusers helpers: FIR and K resampling, blending masks, rays, rotary coordinates -----------

@group("diffusers_helpers")
def _diffusers_helpers() -> dict:
    """diffusers' module-level helpers and small layers that the model cases do not build (FIR
    and K resampling, 1-D resampling of the 1-D UNet, LoRA layers with a network alpha, tile
    blending masks, camera rays, LTX-2 video coordinates, RoPE application), with gradients
    where they take a tensor that can have one."""
    import importlib as il
    gen = torch.Generator().manual_seed(12)
    img = torch.randn(2, 3, 8, 8, generator=gen)
    seq = torch.randn(2, 3, 8, generator=gen)
    down, up = il.import_module("diffusers.models.downsampling"), il.import_module("diffusers.models.upsampling")
    blocks = il.import_module("diffusers.models.unets.unet_1d_blocks")
    lora = il.import_module("diffusers.models.lora")

    def module_run(make, x):
        seed(0)
        try:
            layer = make()
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"[:100]
        return _call(lambda: {**grad_run(layer, x), "grads": {n: p.grad for n, p in layer.named_parameters()
                                                                if p.grad is not None}})
    out = {
        "fir_down": _call(lambda: grad_run(lambda h: down.downsample_2d(h, kernel=torch.tensor([1.0, 3.0, 3.0, 1.0])), img)),
        "fir_up": _call(lambda: grad_run(lambda h: up.upsample_2d(h, kernel=torch.tensor([1.0, 3.0, 3.0, 1.0])), img)),
        "fir_down_layer": module_run(lambda: down.FirDownsample2D(3, use_conv=True, out_channels=3), img),
        "fir_up_layer": module_run(lambda: up.FirUpsample2D(3, use_conv=True, out_channels=3), img),
        "fir_down_plain": module_run(lambda: down.FirDownsample2D(3, use_conv=False), img),
        "fir_up_plain": module_run(lambda: up.FirUpsample2D(3, use_conv=False), img),
        "k_down": module_run(down.KDownsample2D, img),
        "k_up": module_run(up.KUpsample2D, img),
        "down_1d": module_run(blocks.Downsample1d, seq),
        "up_1d": module_run(blocks.Upsample1d, seq),
        "lora_linear": module_run(lambda: lora.LoRALinearLayer(8, 4, rank=2, network_alpha=3.0), seq),
        "lora_conv": module_run(lambda: lora.LoRAConv2dLayer(3, 4, rank=2, network_alpha=3.0), img),
    }
    try:
        layout = il.import_module("diffusers.pipelines.ltx2.dfr_layout")
        out["trapezoid"] = _call(layout.trapezoidal_mask_1d, 8, 2, 3)
        out["rectangle"] = _call(layout.rectangular_mask_1d, 8, 3)
    except Exception as exc:
        out["layout"] = f"{type(exc).__name__}: {exc}"[:100]
    for module, cls_name in (("diffusers.models.transformers.transformer_ltx2", "LTX2AudioVideoRotaryPosEmbed"),
                             ("diffusers.models.transformers.transformer_sana_wm_refiner", "SanaWMLTX2AudioVideoRotaryPosEmbed")):
        try:
            rope = getattr(il.import_module(module), cls_name)(dim=16)
            out[f"{cls_name}.coords"] = _call(rope.prepare_video_coords, 2, 3, 4, 4, torch.device("cpu"))
            out[f"{cls_name}.coords_fps"] = _call(rope.prepare_video_coords, 1, 5, 4, 4, torch.device("cpu"), fps=12.0)
        except Exception as exc:
            out[cls_name] = f"{type(exc).__name__}: {exc}"[:100]
    try:
        wm = il.import_module("diffusers.models.transformers.transformer_sana_wm")
        rays = torch.nn.functional.normalize(torch.randn(2, 3, 3, generator=gen), dim=-1)
        pose = torch.eye(4).repeat(1, 2, 1, 1)
        pose[0, 1, :3, 3] = torch.tensor([0.5, -1.0, 2.0])
        out["rays"] = _call(wm.world_to_ray_mats, rays, pose)
        out["invert_se3"] = _call(wm._invert_SE3, pose)
    except Exception as exc:
        out["sana_wm"] = f"{type(exc).__name__}: {exc}"[:100]
    for module, fn, args in (("diffusers.models.transformers.transformer_prx", "get_image_ids", (2, 8, 8, 2, torch.device("cpu"))),
                             ("diffusers.models.transformers.transformer_helios", "apply_rotary_emb_transposed", None),
                             ("diffusers.utils.torch_utils", "fourier_filter", None),
                             ("diffusers.models.transformers.ace_step_transformer", "_create_4d_mask", None)):
        try:
            f = getattr(il.import_module(module), fn)
        except Exception as exc:
            out[fn] = f"{type(exc).__name__}: {exc}"[:100]
            continue
        if fn == "apply_rotary_emb_transposed":
            out[fn] = _call(lambda: grad_run(f, torch.randn(2, 5, 2, 8, generator=gen), torch.randn(2, 5, 16, generator=gen)))
        elif fn == "fourier_filter":
            out[fn] = _call(lambda: grad_run(lambda x: f(x, 1, 0.5), img))
        elif fn == "_create_4d_mask":
            mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]])
            out[fn] = {"causal": _call(f, 4, torch.float32, torch.device("cpu"), mask),
                       "window": _call(f, 4, torch.float32, torch.device("cpu"), mask, 2, True),
                       "full": _call(f, 4, torch.float32, torch.device("cpu"), mask, None, False, False)}
        else:
            out[fn] = _call(f, *args)
    return out


# ---- kornia helpers: cameras, boxes, matrices, metrics, morphology with masked kernels ------------

@group("kornia_helpers")
def _kornia_helpers() -> dict:
    """kornia's functions with the options and inputs its docstring examples do not take
    (rotated extrinsics, structuring elements with holes, CLAHE's differentiable path, each
    Bayer pattern, detection metrics over several classes), with gradients where a tensor
    takes one."""
    import kornia
    from kornia.color import raw
    from kornia.feature.adalam import utils as adalam
    from kornia.geometry import bbox, linalg
    from kornia.geometry.camera import utils as cam
    from kornia.geometry.epipolar import fundamental, projection
    from kornia.geometry.transform import imgwarp
    gen = torch.Generator().manual_seed(13)
    img = torch.rand(1, 3, 16, 16, generator=gen)
    gray = torch.rand(1, 1, 8, 8, generator=gen)
    out = {
        "extrinsics": _call(lambda: grad_run(lambda a, b, c: cam.create_extrinsics_with_rotation(
            a, b, c, [1.0, 0.0], [0.0, 2.0], [3.0, 1.0], "cpu", torch.float32),
            torch.tensor([0.1, 0.5]), torch.tensor([0.2, -0.3]), torch.tensor([0.3, 0.0]))),
        "raw": {cfa.name: _call(lambda c=cfa: grad_run(lambda x: raw.rgb_to_raw(x, c), img)) for cfa in raw.CFA},
        "clahe": _call(lambda: grad_run(lambda x: kornia.enhance.equalize_clahe(x, 2.0, (2, 2), True), img)),
        "clahe_fast": _call(kornia.enhance.equalize_clahe, img, 2.0, (2, 2)),
        "binary_kernel": _call(kornia.filters.get_binary_kernel2d, (3, 2)),
        "inv2x2": _call(lambda: grad_run(lambda m: adalam.batch_2x2_inv(m, check_dets=True),
                                         torch.tensor([[[2.0, 1.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]]]))),
        "krt": _call(lambda: grad_run(projection.projection_from_KRt, torch.eye(3)[None] * 2, torch.eye(3)[None],
                                      torch.ones(1, 3, 1))),
        "normalize_points": _call(lambda: grad_run(fundamental.normalize_points, torch.rand(1, 6, 2, generator=gen))),
        "translation2d": _call(lambda: grad_run(imgwarp.get_translation_matrix2d, torch.tensor([[1.0, 2.0]]))),
        "affine3d": _call(lambda: grad_run(imgwarp.get_affine_matrix3d, torch.tensor([[1.0, 2.0, 3.0]]),
                                           torch.zeros(1, 3), torch.ones(1, 3), torch.tensor([[10.0, 20.0, 30.0]]))),
        "perspective3d": _call(lambda: grad_run(imgwarp.get_perspective_transform3d,
                                                torch.tensor([[[0., 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]]]),
                                                torch.tensor([[[0., 0, 0], [2, 0, 0], [2, 1, 0], [0, 1, 0], [0, 0, 1], [2, 0, 1], [2, 1, 1], [0, 1, 1.5]]]))),
        "point_line": _call(lambda: grad_run(linalg.point_line_distance, torch.tensor([[1.0, 2.0]]), torch.tensor([[1.0, -1.0, 0.5]]))),
        "bbox_xywh": _call(lambda: grad_run(lambda m, b: bbox.transform_bbox(m, b, mode="xywh"),
                                            torch.eye(3)[None] * torch.tensor([-1.0, 1.0, 1.0])[:, None], torch.tensor([[[1.0, 2.0, 3.0, 4.0]]]))),
        "bbox_xyxy_restore": _call(lambda: grad_run(lambda m, b: bbox.transform_bbox(m, b, restore_coordinates=True),
                                                    torch.eye(3)[None] * torch.tensor([-1.0, 1.0, 1.0])[:, None],
                                                    torch.tensor([[[1.0, 2.0, 3.0, 4.0]]]))),
    }
    kernel = torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    for name in ("dilation", "erosion"):
        fn = getattr(kornia.morphology, name)
        out[name] = _call(lambda f=fn: grad_run(lambda x: f(x, kernel), gray))
        out[f"{name}_unfold"] = _call(lambda f=fn: grad_run(lambda x: f(x, kernel, engine="unfold"), gray))
        out[f"{name}_se"] = _call(lambda f=fn: grad_run(lambda x: f(x, kernel, structuring_element=kernel * 0.5), gray))
    boxes = [torch.tensor([[0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 15.0, 15.0], [1.0, 1.0, 9.0, 9.0]])]
    out["map"] = _call(kornia.metrics.mean_average_precision, boxes, [torch.tensor([1, 2, 1])], [torch.tensor([0.9, 0.8, 0.7])],
                       [torch.tensor([[0.0, 0.0, 10.0, 10.0], [20.0, 20.0, 30.0, 30.0]])], [torch.tensor([1, 2])], 3)
    return out


# ---- torchvision helpers: keypoint heatmaps, masks, integer rotated boxes, keypoint transforms ------

@group("torchvision_helpers")
def _torchvision_helpers() -> dict:
    """torchvision's detection and transform helpers on the inputs only a keypoint or mask head,
    integer rotated boxes or uint8 images give them, with gradients where a tensor takes one."""
    from torchvision.models.detection import _utils as det_utils, roi_heads, transform
    from torchvision.ops import _box_convert as bc, boxes as box_ops
    from torchvision.transforms.v2 import functional as TF
    from torchvision.transforms.v2.functional import _meta
    gen = torch.Generator().manual_seed(14)
    rois = torch.tensor([[1.0, 2.0, 9.0, 12.0], [0.0, 0.0, 6.0, 5.0]])
    keypoints = torch.tensor([[[2.0, 3.0, 1.0], [8.5, 11.0, 1.0]], [[1.0, 1.0, 0.0], [5.0, 4.0, 1.0]]])
    ints = torch.tensor([[10, 12, 6, 4, 30], [5, 5, 2, 8, -45]])
    out = {
        "to_heatmap": _call(roi_heads.keypoints_to_heatmap, keypoints, rois, 7),
        "from_heatmap": _call(lambda: grad_run(lambda m: roi_heads.heatmaps_to_keypoints(m, rois),
                                               torch.randn(2, 2, 7, 7, generator=gen))),
        "expand": _call(lambda: grad_run(lambda b: roi_heads.expand_boxes(b, 1.2), rois)),
        "paste": _call(lambda: grad_run(lambda m: roi_heads.paste_mask_in_image(m, torch.tensor([1, 2, 6, 7]), 10, 12),
                                        torch.rand(5, 5, generator=gen))),
        "resize_kp": _call(lambda: grad_run(lambda k: transform.resize_keypoints(k, [20, 30], [40, 45]), keypoints)),
        "masks_to_boxes": _call(box_ops.masks_to_boxes, torch.rand(3, 6, 7, generator=gen) > 0.6),
        "masks_to_boxes_empty": _call(box_ops.masks_to_boxes, torch.zeros(2, 4, 4, dtype=torch.bool)),
        "nms_vanilla": _call(box_ops._batched_nms_vanilla, torch.tensor([[0.0, 0, 10, 10], [1, 1, 11, 11], [0, 0, 10, 10]]),
                             torch.tensor([0.9, 0.8, 0.7]), torch.tensor([0, 0, 1]), 0.5),
        "sampler": _call(lambda: (seed(3), det_utils.BalancedPositiveNegativeSampler(4, 0.5)(
            [torch.tensor([1, 0, -1, 1, 0, 0, 1, 1]), torch.tensor([0, 0, 1, -1])]))[1]),
        "gamma": _call(lambda: grad_run(lambda x: TF.adjust_gamma_image(x, 0.7, 1.3), torch.rand(1, 3, 4, 4, generator=gen))),
        "gamma_uint8": _call(TF.adjust_gamma_image, torch.randint(0, 255, (1, 3, 4, 4), generator=gen, dtype=torch.uint8), 0.7, 1.3),
        "hflip_kp": _call(lambda: grad_run(lambda k: TF.horizontal_flip_keypoints(k, (10, 12)), keypoints[..., :2])),
        "vflip_kp": _call(lambda: grad_run(lambda k: TF.vertical_flip_keypoints(k, (10, 12)), keypoints[..., :2])),
        "resize_uint8": _call(TF.resize_image, torch.randint(0, 255, (1, 3, 8, 8), generator=gen, dtype=torch.uint8), [5, 6],
                              antialias=True),
        "resize_uint8_bicubic": _call(TF.resize_image, torch.randint(0, 255, (1, 3, 8, 8), generator=gen, dtype=torch.uint8),
                                      [12, 12], interpolation=TF.InterpolationMode.BICUBIC),
        "elastic_kp": _call(TF.elastic_keypoints, keypoints[..., :2].reshape(-1, 2), (10, 12), torch.rand(1, 10, 12, 2, generator=gen) * 0.1),
        "rot_int": {name: _call(getattr(bc, name), ints.clone()) for name in
                    ("_box_cxcywhr_to_xywhr", "_box_xywhr_to_cxcywhr", "_box_xywhr_to_xyxyxyxy")},
        "rot_int_back": _call(bc._box_xyxyxyxy_to_xywhr, torch.tensor([[10, 12, 10, 20, 16, 20, 16, 12]])),
        "meta_int": _call(_meta._cxcywhr_to_xywhr, ints.clone(), False),
        "order_points": _call(_meta._order_bounding_boxes_points, torch.tensor([[3.0, 1.0, 1.0, 3.0, 3.0, 5.0, 5.0, 3.0]])),
    }
    return out


# ---- x-transformers: sampling filters, token masking in training, residual-stream variants ---------

@group("x_transformers")
def _x_transformers() -> dict:
    """x-transformers' sampling filters and masking helpers called directly, and small decoders
    trained one step with the options that build the rewritten layers: token masking in the
    autoregressive wrapper, hyper-connections (several residual streams). (The gated
    multi-residual cannot be built through ``Decoder``: it asserts a ``read_gate_rank`` the
    decoder does not pass. Polar positions: ``x_transformers_polar``.)"""
    from x_transformers import Decoder, TransformerWrapper
    from x_transformers import autoregressive_wrapper as ar, nonautoregressive_wrapper as nar
    from migration.cases import train_step
    gen = torch.Generator().manual_seed(15)
    logits = torch.randn(2, 12, generator=gen)
    mask = torch.ones(2, 6, dtype=torch.bool)
    mask[1, 4:] = False
    out = {
        "top_p": _call(lambda: grad_run(ar.top_p, logits)),
        "top_k": _call(lambda: grad_run(lambda x: ar.top_k(x, k=3), logits)),
        "mask_subset": _call(lambda: (seed(4), nar.get_mask_subset_prob(mask, 0.5))[1]),
    }
    tokens = torch.randint(0, 20, (2, 9), generator=gen)

    def decoder(**kw):
        seed(0)
        return TransformerWrapper(num_tokens=20, max_seq_len=16, attn_layers=Decoder(dim=16, depth=2, heads=2, **kw))
    out["hyper"] = _call(lambda: train_step(decoder(num_residual_streams=2), lambda m: m(tokens)))
    out["ar_masked"] = _call(lambda: train_step(ar.AutoregressiveWrapper(decoder(), mask_prob=0.3), lambda m: m(tokens)))
    return out


@group("x_transformers_polar")
def _x_transformers_polar() -> dict:
    """A decoder with polar positions and their uniform bias init: the original raises ("a leaf
    Variable that requires grad is being used in an in-place operation": ``uniform_`` on the
    new ``nn.Parameter`` outside ``no_grad``), which the safe tier fixes (``with
    torch.no_grad():``). A case the original cannot run compares nothing; it is kept apart so
    that the other x-transformers cases stay a comparison."""
    from x_transformers import Decoder, TransformerWrapper
    from migration.cases import train_step
    tokens = torch.randint(0, 20, (2, 9), generator=torch.Generator().manual_seed(15))
    seed(0)
    model = TransformerWrapper(num_tokens=20, max_seq_len=16, attn_layers=Decoder(
        dim=16, depth=2, heads=2, polar_pos_emb=True, polar_bias_uniform_init=True))
    return train_step(model, lambda m: m(tokens))


# ---- transformers data collators: masked and permutation language modelling ----------------------

def _word_tokenizer():
    """A word-level fast tokenizer built in memory (no download): 20 words and the special tokens
    the collators need."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(20)])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]")


@group("data_collators")
def _data_collators() -> dict:
    """The language-modelling collators' masking (special tokens and padding kept out, labels of
    the unmasked set to -100, permutation targets), seeded, on padded batches of ids."""
    from transformers import DataCollatorForLanguageModeling, DataCollatorForPermutationLanguageModeling
    tok = _word_tokenizer()
    rows = [[2, 5, 6, 7, 8, 9, 10, 3], [2, 11, 12, 13, 3], [2, 14, 15, 16, 17, 18, 3]]
    examples = [{"input_ids": r} for r in rows]
    out = {}
    for name, make in (("mlm", lambda: DataCollatorForLanguageModeling(tok, mlm_probability=0.5, seed=3)),
                       ("mlm_special", lambda: DataCollatorForLanguageModeling(tok, mlm_probability=0.5, seed=3)),
                       ("plm", lambda: DataCollatorForPermutationLanguageModeling(tok, plm_probability=0.5, max_span_length=2))):
        seed(5)
        batch = [{"input_ids": r + [0] * (8 - len(r))} for r in rows] if name == "plm" else examples
        if name == "mlm_special":
            batch = [{"input_ids": r, "special_tokens_mask": [int(t in (2, 3)) for t in r]} for r in rows]
        out[name] = _call(lambda: dict(make()(batch)))
    return out


from migration import sweep_modules  # noqa: E402,F401  (registers its groups)
