"""Sweep cases chosen by where the rewrite touched: for each rewritten spot, the top-level function
or class that holds it, and the runnable entry points (model classes, timm models, diffusers
models) that reach it through the module's names.

- ``tfc:<module>.<Class>``: one ``PreTrainedModel`` class of a transformers modeling file, built
  from its config class's defaults shrunk to a tiny one (``sweep_transformers.shrink``), forward
  in train mode on seeded dummy inputs (with labels where the head takes them, so the loss runs
  too), backward with fixed cotangents, one AdamW step. The classes of a file are chosen greedily
  to cover the file's rewritten top-level definitions (a class covers the definitions it names,
  transitively through the module's own names); a file's base model is always among them.
- ``timmfile:<module>``: timm models of the model files that name a rewritten definition of a
  ``timm/layers`` file, and of the rewritten model files, smallest variants first.

Everything is seeded; a class that does not build or run fails the same way in every copy ("both
fail"), with its reason recorded in its state.
"""

from __future__ import annotations

import ast
import collections
import pathlib
from typing import Dict, Iterable, List, Set, Tuple

import torch

from migration.cases import seed, train_step

MAX_PARAMS = 3_000_000


# ---- where the spots are -------------------------------------------------------------------------

def top_level_names(tree: ast.Module) -> Dict[str, Tuple[int, int]]:
    """Top-level functions and classes of a module: name -> (first line, last line)."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out[node.name] = (first, node.end_lineno or node.lineno)
    return out


def spot_defs(work: pathlib.Path, tiers: Iterable[str], spots_of) -> Dict[str, Set[str]]:
    """rel -> the top-level definitions holding a rewritten spot of any tier ("<module>" for a
    spot outside every definition)."""
    out: Dict[str, Set[str]] = collections.defaultdict(set)
    for tier in tiers:
        by_file: Dict[str, List[Tuple[int, int]]] = collections.defaultdict(list)
        for rel, first, last, _ in spots_of(work, tier):
            by_file[rel].append((first, last))
        for rel, spans in by_file.items():
            try:
                tree = ast.parse((work / tier / rel).read_text(encoding="utf-8"))
            except SyntaxError:
                continue
            names = top_level_names(tree)
            for first, last in spans:
                holder = [n for n, (a, b) in names.items() if a <= last and first <= b]
                out[rel].update(holder or ["<module>"])
    return out


def references(path: pathlib.Path) -> Dict[str, Set[str]]:
    """For each top-level definition of a module: the module's top-level names its text uses
    (bases and decorators included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = top_level_names(tree)
    out = {}
    for node in tree.body:
        if getattr(node, "name", None) not in names:
            continue
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        used |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
        out[node.name] = (used & set(names)) - {node.name}
    return out


def reach(refs: Dict[str, Set[str]], start: str) -> Set[str]:
    """The definitions ``start`` names, transitively; not through a ``...PreTrainedModel`` base,
    whose ``_init_weights`` names every head class without running it."""
    seen, todo = {start}, [start]
    while todo:
        name = todo.pop()
        if name.endswith("PreTrainedModel") and name != start:
            continue
        for nxt in refs.get(name, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def cover(candidates: List[str], refs: Dict[str, Set[str]], wanted: Set[str], always: List[str] = ()) -> List[str]:
    """Greedy set cover: candidates (in order) whose reach covers ``wanted``; ``always`` first."""
    reached = {c: reach(refs, c) & wanted for c in candidates}
    chosen = [c for c in always if c in reached]
    left = set(wanted) - set().union(*(reached[c] for c in chosen)) if chosen else set(wanted)
    while left and candidates:
        best = max(candidates, key=lambda c: (len(reached[c] & left), -candidates.index(c)))
        if not reached[best] & left:
            break
        chosen.append(best)
        left -= reached[best]
    return chosen


# ---- transformers: model classes of a modeling file ----------------------------------------------

def model_classes(path: pathlib.Path) -> List[str]:
    """The classes of a modeling file that are models (a base chain within the file that reaches a
    ``...PreTrainedModel``), read from its text; the ``...PreTrainedModel`` bases left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bases = {n.name: [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in n.bases]
             for n in tree.body if isinstance(n, ast.ClassDef)}

    def is_model(name: str, seen=()) -> bool:
        if name.endswith("PreTrainedModel") and name not in bases:
            return True
        return any(b.endswith("PreTrainedModel") or (b in bases and b not in seen and is_model(b, (*seen, b)))
                   for b in bases.get(name, ()))
    return [n for n in bases if is_model(n) and not n.endswith("PreTrainedModel")]


def tf_class_plan(original: pathlib.Path, defs: Dict[str, Set[str]]) -> List[str]:
    """``tfc:`` cases for every transformers modeling file with a rewritten definition: its base
    model, then the model classes that cover the rest of its rewritten definitions."""
    out = []
    for rel in sorted(defs):
        parts = rel.split("/")
        if parts[:2] != ["transformers", "models"] or len(parts) != 4 or not parts[3].startswith("modeling_"):
            continue
        models = model_classes(original / rel)
        if not models:
            continue
        models.sort(key=lambda n: (not n.endswith("Model"), len(n), n))  # base models first
        refs = references(original / rel)
        wanted = set(defs[rel]) - {"<module>"}
        base = [n for n in models if n.endswith("Model")][:1]
        module = rel[:-3].replace("/", ".")
        out += [f"tfc:{module}.{n}" for n in cover(models, refs, wanted, base)]
    return out


def tfcpad_plan(original: pathlib.Path, defs: Dict[str, Set[str]]) -> List[str]:
    """``tfcpad:`` cases: the sequence classifiers of the rewritten modeling files that pool over
    a padding mask (``_get_feature_vector_attention_mask(hidden_states.shape[1], ...)``: the
    audio models), which their ``tfc:`` case, given no mask, never takes."""
    out = []
    for rel in sorted(defs):
        parts = rel.split("/")
        if parts[:2] != ["transformers", "models"] or len(parts) != 4 or not parts[3].startswith("modeling_"):
            continue
        text = (original / rel).read_text(encoding="utf-8")
        if "_get_feature_vector_attention_mask(hidden_states.shape[1]" not in text:
            continue
        module = rel[:-3].replace("/", ".")
        out += [f"tfcpad:{module}.{n}" for n in model_classes(original / rel) if n.endswith("ForSequenceClassification")]
    return out


HEAD_LABELS = ("ForCausalLM", "ForMaskedLM", "LMHeadModel", "ForConditionalGeneration", "ForSequenceClassification",
               "ForTokenClassification", "ForQuestionAnswering", "ForImageClassification", "ForAudioClassification",
               "ForPreTraining", "ForMultipleChoice")


def class_inputs(cls_name: str, model, cfg) -> List[dict]:
    """Inputs to try, in order: with labels for the heads that take them, then without."""
    from migration.sweep_transformers import inputs_for
    plain = inputs_for(model, cfg, 1)
    vocab = getattr(cfg, "vocab_size", None) or 400
    gen = torch.Generator().manual_seed(4)
    if "input_ids" in plain:
        hi = max(5, min(400, vocab))
        plain["input_ids"] = torch.randint(4 if hi > 8 else 0, hi, plain["input_ids"].shape, generator=gen)
        if "decoder_input_ids" in plain:
            plain["decoder_input_ids"] = torch.randint(4 if hi > 8 else 0, hi, plain["decoder_input_ids"].shape, generator=gen)
    if "input_features" in plain and isinstance(getattr(cfg, "max_source_positions", None), int):  # whisper-like
        frames = 2 * cfg.max_source_positions
        plain["input_features"] = torch.randn(2, plain["input_features"].shape[1], frames, generator=gen)
    if getattr(cfg, "is_encoder_decoder", False) and "decoder_input_ids" not in plain:
        hi = max(5, min(400, vocab))
        plain["decoder_input_ids"] = torch.randint(4 if hi > 8 else 0, hi, (2, 5), generator=gen)
    if cls_name.endswith("ForMultipleChoice") and "input_ids" in plain:
        plain["input_ids"] = plain["input_ids"][:, None].expand(2, 2, -1).contiguous()
    labelled = dict(plain)
    batch = next(iter(plain.values())).shape[0]
    if cls_name.endswith(("ForSequenceClassification", "ForQuestionAnswering")) and "decoder_input_ids" in plain:
        del plain["decoder_input_ids"]  # BART-like heads: decoder inputs from the input ids, one eos each
        eos = getattr(cfg, "eos_token_id", None)
        if isinstance(eos, int) and "input_ids" in plain:
            plain["input_ids"][:, -1] = eos
        labelled = dict(plain)
    if cls_name.endswith(("ForCausalLM", "LMHeadModel", "ForMaskedLM")) and "input_ids" in plain:
        labelled["labels"] = plain["input_ids"].clone()
    elif cls_name.endswith(("ForConditionalGeneration", "MTModel")) and "decoder_input_ids" in plain:
        labelled["labels"] = labelled.pop("decoder_input_ids").clone()  # the model shifts them into decoder inputs
    elif cls_name.endswith(("ForSequenceClassification", "ForImageClassification", "ForAudioClassification",
                            "ForMultipleChoice")):
        labelled["labels"] = torch.tensor([1, 0])[:batch]
    elif cls_name.endswith("ForTokenClassification") and "input_ids" in plain:
        labelled["labels"] = torch.randint(0, 2, plain["input_ids"].shape, generator=gen)
    elif cls_name.endswith("ForQuestionAnswering"):
        labelled["start_positions"], labelled["end_positions"] = torch.tensor([1, 3]), torch.tensor([4, 6])
    elif cls_name.endswith("ForObjectDetection") and "pixel_values" in plain:  # the matcher, the losses, denoising
        boxes = torch.tensor([[0.5, 0.5, 0.2, 0.3], [0.3, 0.6, 0.1, 0.2]])
        labelled["labels"] = [{"class_labels": torch.tensor([1, 0]), "boxes": boxes.clone()} for _ in range(batch)]
    return [labelled, plain] if labelled.keys() != plain.keys() else [plain]


def tiny_config_of(cls, version: int):
    from migration.sweep_transformers import scaled_widths, shrink
    cfg_cls = cls.config_class
    base = cfg_cls()
    d = shrink(base.to_dict(), min(version, 2))
    if version >= 4:
        d = scaled_widths(d)
    for key in ("conv_dim", "tdnn_dim"):  # speech feature extractors: 512 channels a layer
        if isinstance(d.get(key), list):
            d[key] = [32] * len(d[key])
    cfg = cfg_cls.from_dict(d)
    for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout", "drop_path_rate",
                "activation_dropout", "classifier_dropout", "hidden_dropout", "layerdrop", "encoder_layerdrop",
                "decoder_layerdrop"):
        if isinstance(getattr(cfg, key, None), float):
            setattr(cfg, key, 0.0)
    try:  # the eager attention functions (where most rewritten attention lines are); sdpa runs in tf:<type>
        cfg._attn_implementation = "eager"
    except Exception:
        pass
    if getattr(cfg, "pad_token_id", None) is None:
        try:
            cfg.pad_token_id = 0
        except Exception:
            pass
    return cfg


def build(cls, cfg, cap: int = MAX_PARAMS):
    with torch.device("meta"):
        try:
            n = sum(p.numel() for p in cls(cfg).parameters())
        except Exception:
            n = 0
    if n > cap:
        raise ValueError(f"tiny config still has {n} parameters")
    seed(0)
    model = cls(cfg)
    n = sum(p.numel() for p in model.parameters())
    if n > cap:
        raise ValueError(f"tiny config still has {n} parameters")
    return model


def padded(inputs: dict) -> dict:
    """The inputs with an attention mask that pads the second row's last quarter (text or audio):
    the branches that pool or mask by it (``hidden_states[~padding_mask] = 0.0``) run."""
    main = next((k for k in ("input_values", "input_ids") if k in inputs), None)
    if main is None or "attention_mask" in inputs or inputs[main].dim() != 2:
        return inputs
    x = inputs[main]
    length = x.shape[-1]
    mask = torch.ones(x.shape[0], length, dtype=torch.long)
    if x.shape[0] > 1:
        mask[1, length - max(1, length // 4):] = 0
    return {**inputs, "attention_mask": mask}


def class_case(path: str, pad: bool = False):
    """One model class: the first (config version, inputs) that builds and runs; what it left
    behind, and the notes of the tries before it (the same in every copy unless the rewrite
    changed something). ``pad``: with a padding attention mask (``padded``)."""
    import importlib
    module, cls_name = path.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), cls_name)
    notes = []
    # 3: version 2's config, no SpecAugment masks, longer audio, up to 30M parameters; 4: version 2's
    # config with every other width scaled down (sweep_transformers.scaled_widths), for the classes
    # still over the cap
    for version in (1, 2, 3, 4):
        cap = MAX_PARAMS if version != 3 else 30_000_000
        try:
            cfg = tiny_config_of(cls, 2 if version == 3 else version)
            if version == 3:
                for key in ("mask_time_prob", "mask_feature_prob"):
                    if isinstance(getattr(cfg, key, None), float):
                        setattr(cfg, key, 0.0)
            model = build(cls, cfg, cap)
        except Exception as exc:
            notes.append(f"v{version} build: {type(exc).__name__}: {exc}"[:200])
            continue
        tries = class_inputs(cls_name, model, cfg)
        if version == 3:
            for inputs in tries:
                if "input_values" in inputs:
                    inputs["input_values"] = torch.randn(2, 4000, generator=torch.Generator().manual_seed(5))
        if pad:  # after the inputs are final: the mask's length is theirs
            tries = [padded(t) for t in tries]
        for i, inputs in enumerate(tries):
            if i:
                model = build(cls, cfg, cap)  # a fresh model: the failed try may have left gradients
            try:
                got = train_step(model, lambda m: m(**inputs))
                return {"run": got, "notes": notes, "inputs": sorted(inputs)}
            except Exception as exc:
                notes.append(f"v{version} run {sorted(inputs)}: {type(exc).__name__}: {exc}"[:200])
    raise RuntimeError("; ".join(notes)[:300])


# ---- timm: the models that use a rewritten definition ---------------------------------------------

def timm_plan(original: pathlib.Path, defs: Dict[str, Set[str]], per_def: int = 2) -> List[str]:
    """``timm:<arch>`` cases: for a rewritten ``timm/models`` file, its smallest models covering
    its rewritten definitions (one model per entry point that reaches them); for a rewritten
    ``timm/layers`` file, the smallest model of each model file naming one of its rewritten
    definitions (at most ``per_def`` files per definition)."""
    import timm
    from migration.sweep_cases import timm_models_of
    out: List[str] = []
    models_dir = original / "timm" / "models"
    texts = {p.stem: p.read_text(encoding="utf-8") for p in sorted(models_dir.glob("*.py")) if not p.stem.startswith("_")}
    for rel in sorted(defs):
        parts = rel.split("/")
        if parts[0] != "timm" or len(parts) != 3 or parts[2].startswith("__"):
            continue
        names = set(defs[rel]) - {"<module>"}
        if parts[1] == "models":
            module = parts[2][:-3]
            found = timm_models_of(module, many=True)
            out += [f"timm:{a}" for a in found[:max(1, min(4, len(names)))]]
        elif parts[1] == "layers":
            for name in sorted(names):
                users = [m for m, text in texts.items() if name in text]
                users.sort(key=lambda m: (len(timm.list_models(module=m)) == 0, m))
                for m in users[:per_def]:
                    out += [f"timm:{a}" for a in timm_models_of(m)]
    return list(dict.fromkeys(out))


# ---- diffusers: model classes of a rewritten models file ------------------------------------------

DIFF_INTS = {"layers_per_block": 1, "num_layers": 1, "num_single_layers": 1, "norm_num_groups": 4, "attention_head_dim": 8,
             "num_attention_heads": 2, "cross_attention_dim": 16, "sample_size": 16, "joint_attention_dim": 16,
             "pooled_projection_dim": 16, "caption_channels": 16, "text_embed_dim": 16, "caption_projection_dim": 16,
             "num_refiner_layers": 1, "num_res_blocks": 1, "num_blocks": 1, "transformer_layers_per_block": 1,
             "encoder_hid_dim": 16, "addition_time_embed_dim": 8, "projection_class_embeddings_input_dim": None,
             "time_embed_dim": 16, "inner_dim": 16, "hidden_size": 16, "num_heads": 2, "depth": 1, "head_dim": 8,
             "latent_channels": 4, "z_channels": 4, "base_dim": 8, "dim": 16, "channels": 16, "ch": 8,
             "mid_block_num_layers": 1, "num_mid_blocks": 1}


def diffusers_model_classes(path: pathlib.Path) -> List[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.name for n in tree.body if isinstance(n, ast.ClassDef)
            and any((getattr(b, "id", None) or getattr(b, "attr", "")) == "ModelMixin" for b in n.bases)]


def diffusers_plan(original: pathlib.Path, defs: Dict[str, Set[str]]) -> List[str]:
    out = []
    for rel in sorted(defs):
        if not rel.startswith(("diffusers/models/autoencoders/", "diffusers/models/unets/", "diffusers/models/transformers/",
                               "diffusers/models/controlnets/")):
            continue
        models = diffusers_model_classes(original / rel)
        refs = references(original / rel)
        wanted = set(defs[rel]) - {"<module>"}
        module = rel[:-3].replace("/", ".")
        out += [f"dfm:{module}.{n}" for n in cover(models, refs, wanted)]
    return out


def diffusers_kwargs(cls) -> dict:
    import inspect
    kwargs = {}
    for name, p in inspect.signature(cls.__init__).parameters.items():
        d = p.default
        if name in DIFF_INTS and isinstance(d, int) and not isinstance(d, bool) and DIFF_INTS[name] is not None:
            kwargs[name] = DIFF_INTS[name]
        elif name in ("block_out_channels", "decoder_block_out_channels", "encoder_block_out_channels") and isinstance(d, (tuple, list)):
            kwargs[name] = type(d)(16 for _ in d)
        elif name in ("layers_per_block", "transformer_layers_per_block", "num_attention_heads", "attention_head_dim") \
                and isinstance(d, (tuple, list)):
            kwargs[name] = type(d)(DIFF_INTS[name] for _ in d)
        elif name in ("dropout", "drop_path_rate") and isinstance(d, float):
            kwargs[name] = 0.0
    return kwargs


def diffusers_inputs(model, kwargs: dict) -> List[dict]:
    import inspect
    params = inspect.signature(model.forward).parameters
    cfg = model.config
    ch = cfg.get("in_channels", 3) if hasattr(cfg, "get") else 3
    size = 16
    gen = torch.Generator().manual_seed(3)
    tries = []
    for shape in ((2, ch, size, size), (1, ch, 3, size, size), (2, size, ch)):  # images, videos, packed tokens
        x = torch.randn(*shape, generator=gen)
        found = {}
        first = next(iter(n for n in params if n != "self"), None)
        if first is None:
            continue
        found[first] = x
        if "timestep" in params:
            found["timestep"] = torch.tensor([3, 7][: shape[0]])
        ctx = next((cfg.get(k) for k in ("cross_attention_dim", "joint_attention_dim", "caption_channels", "text_embed_dim",
                                         "text_dim", "text_hidden_dim", "context_dim")
                    if hasattr(cfg, "get") and isinstance(cfg.get(k), int)), None)
        if "encoder_hidden_states" in params and ctx:
            found["encoder_hidden_states"] = torch.randn(shape[0], 4, ctx, generator=gen)
        if "encoder_attention_mask" in params and "encoder_hidden_states" in found \
                and params["encoder_attention_mask"].default is inspect.Parameter.empty:  # required: all tokens kept
            found["encoder_attention_mask"] = torch.ones(shape[0], 4)
        if "pooled_projections" in params and hasattr(cfg, "get") and isinstance(cfg.get("pooled_projection_dim"), int):
            found["pooled_projections"] = torch.randn(shape[0], cfg.get("pooled_projection_dim"), generator=gen)
        if len(shape) == 3:
            for key, rows in (("img_ids", shape[1]), ("txt_ids", 4)):
                if key in params:
                    found[key] = torch.zeros(rows, 3)
        tries.append(found)
    return tries


def diffusers_case(path: str):
    """One diffusers model class, its ``__init__`` defaults shrunk by name (channels 16, one layer
    a block, 2 heads of 8, groups of 4), forward on a 2x C x16x16 (else 1x C x3x16x16) sample with
    a timestep and a context where it takes them, backward, one AdamW step."""
    import importlib
    module, cls_name = path.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), cls_name)
    kwargs = diffusers_kwargs(cls)
    seed(0)
    notes = []
    model = cls(**kwargs)
    n = sum(p.numel() for p in model.parameters())
    if n > MAX_PARAMS:
        raise ValueError(f"small config still has {n} parameters")
    for i, inputs in enumerate(diffusers_inputs(model, kwargs)):
        if i:
            seed(0)
            model = cls(**kwargs)
        try:
            got = train_step(model, lambda m: m(**inputs))
            return {"run": got, "notes": notes, "inputs": sorted(inputs)}
        except Exception as exc:
            notes.append(f"run {[tuple(v.shape) for v in inputs.values()]}: {type(exc).__name__}: {exc}"[:200])
    raise RuntimeError("; ".join(notes)[:300])
