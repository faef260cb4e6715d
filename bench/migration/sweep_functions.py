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


def _rope_case(cls) -> dict:
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
    for name, ids, kind, pad in (("image", image_ids, 1, False), ("image_pad", image_ids, 1, True),
                                 ("video", video_ids, 2, False)):
        input_ids = torch.tensor([ids, [3] + ids[:-1]] if pad else [ids, ids])
        mask = torch.ones_like(input_ids)
        if pad:
            mask[1, 0] = 0
        given = {"input_ids": input_ids, "mm_token_type_ids": torch.tensor([types, [0] + types[:-1]]) * (kind if kind == 1 else 1) * (2 if kind == 2 else 1),
                 "attention_mask": mask}
        grid = torch.tensor([[1, 4, 4], [1, 4, 4]])
        given["image_grid_thw" if kind == 1 else "video_grid_thw"] = grid
        if "second_per_grid_ts" in params and kind == 2:
            given["second_per_grid_ts"] = torch.tensor([1.0, 1.0])
        try:
            got[name] = cls.get_rope_index(obj, **{k: v for k, v in given.items() if k in params})
        except Exception as exc:
            got[name] = f"{type(exc).__name__}: {exc}"[:100]
    return got
