"""Sweep cases that build one small ``nn.Module`` of every transformers modeling file defining it
(``fn:<group>``), where a model case does not take the path that holds the rewritten spots.

- ``moe_experts``: the mixture-of-experts ``...Experts`` modules. A model runs them through the
  experts interface (``grouped_mm`` / ``batched_mm`` by default), so their own ``forward``, the
  eager loop that accumulates each expert's output with ``index_add_``, runs only when the
  config asks for ``experts_implementation="eager"``. Here each one is built from its file's
  tiny config with that setting, and run on seeded tokens, expert indices and routing weights,
  with gradients to the tokens, the weights and the expert parameters.

- ``moe_routers``: the routers that pick experts within the best groups of experts
  (``n_group`` / ``topk_group``, DeepSeek-V3-style): tiny configs keep one group, where the
  group mask is never built. Here each router is built with 8 experts in 2 groups, 2 experts a
  token from 1 group, and run on seeded tokens with gradients to them and to the router weight.

- ``prompt_encoders``: the SAM-family prompt encoders on points, their labels and a box (a
  model case gives pixels only): the coordinate normalisation of the positional embedding and
  the box corners' embedding run, with gradients to the coordinates and the embeddings.

- ``mla_expand_kv``: the multi-head latent attentions' ``expand_kv`` (compressed latents to
  per-head keys and values, the rotary key copied into each head's slice), on seeded latents.

- ``init_weights``: the ``_init_weights`` branches that build an initial value by writing into a
  fresh tensor (deformable attention's sampling grid, a loss's class weights, a recurrence's
  parameter, a fixed position table), for the files whose model case does not build: each
  module class the branch tests with ``isinstance`` is built from the tiny config, filled with
  seeded values, and handed with its submodules to the model's ``_init_weights``; its parameters
  and buffers after it are the result.

Everything is seeded; a module that does not build or run records its error (the same in every
copy unless the rewrite changed something).
"""

from __future__ import annotations

import importlib
import pathlib
import re
from typing import Dict, List

import torch

from migration.cases import seed
from migration.sweep_functions import group

TOKENS, TOP_K = 7, 2


def _configs(module) -> List[object]:
    """The module's tiny config (``sweep_reach.tiny_config_of`` of its first model class whose
    config builds) and its sub-configs (text, talker, ...): the experts of a multimodal model take
    the text one. Where no tiny config passes the config class's validators (widths a validator
    ties together), the shrunk defaults as a plain namespace: the experts read a few sizes only."""
    import types
    from migration.sweep_reach import tiny_config_of
    from migration.sweep_transformers import shrink
    models = [getattr(module, n) for n in sorted(vars(module)) if n.endswith("PreTrainedModel")]
    models = [c for c in models if isinstance(c, type) and getattr(c, "config_class", None)]
    top = None
    for cls in models:
        try:
            top = tiny_config_of(cls, 2)
            break
        except Exception:
            continue
    if top is None and models:
        def space(d: dict):
            return types.SimpleNamespace(**{k: space(v) if isinstance(v, dict) and all(isinstance(x, str) for x in v) else v
                                            for k, v in d.items()})
        try:
            top = space(shrink(models[0].config_class().to_dict(), 2))
        except Exception:
            return []
    found = [top] if top is not None else []
    for cfg in found:  # breadth first through the sub-configs
        found += [getattr(cfg, k) for k in sorted(vars(cfg)) if k.endswith("_config") and getattr(cfg, k) is not None
                  and not isinstance(getattr(cfg, k), (str, int, float, bool, list, dict))]
        if len(found) > 12:
            break
    return found


def _eager(cfg) -> None:
    try:
        cfg._experts_implementation = "eager"
    except Exception:
        pass


def _experts_run(cls, configs: List[object]) -> dict:
    notes = []
    for cfg in configs:
        _eager(cfg)
        seed(0)
        try:
            experts = cls(cfg)
        except Exception as exc:
            notes.append(f"build: {type(exc).__name__}: {exc}"[:100])
            continue
        gen = torch.Generator().manual_seed(6)
        with torch.no_grad():  # torch.empty parameters: seeded values
            for p in experts.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.2)
        count = getattr(experts, "num_experts", None) or next(iter(experts.parameters())).shape[0]
        width = getattr(experts, "hidden_dim", None) or getattr(experts, "hidden_size", None) or cfg.hidden_size
        hidden = torch.randn(TOKENS, width, generator=gen).requires_grad_()
        index = torch.tensor([[i % count, (i + 1 + i // count) % count] for i in range(TOKENS)])
        weights = torch.randn(TOKENS, TOP_K, generator=gen).softmax(-1).requires_grad_()
        try:
            out = experts(hidden, index, weights)
            out = out[0] if isinstance(out, tuple) else out
            cot = torch.randn(out.shape, generator=gen, dtype=torch.float64)
            (out.double() * cot).sum().backward()
        except Exception as exc:
            notes.append(f"run: {type(exc).__name__}: {exc}"[:100])
            continue
        return {"out": out.detach(), "hidden_grad": hidden.grad, "weights_grad": weights.grad,
                "grads": {n: p.grad for n, p in experts.named_parameters() if p.grad is not None},
                "notes": notes}
    raise RuntimeError("; ".join(notes)[:300] or "no config")


@group("moe_experts")
def _moe_experts() -> dict:
    import transformers
    root = pathlib.Path(transformers.__file__).parent
    out: Dict[str, object] = {}
    for path in sorted((root / "models").rglob("modeling_*.py")):
        text = path.read_text(encoding="utf-8")
        if "index_add" not in text:  # index_add_ in the original, index_add( where a tier rewrote it
            continue
        names = sorted(re.findall(r"^class (\w+Experts)\(", text, re.M))
        if not names:
            continue
        name = "transformers." + ".".join(path.relative_to(root).with_suffix("").parts)
        try:
            module = importlib.import_module(name)
            configs = _configs(module)
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"[:100]
            continue
        for cls_name in names:
            cls = getattr(module, cls_name, None)
            if cls is None or "index_add" not in _source(cls):
                continue
            try:
                out[f"{name}.{cls_name}"] = _experts_run(cls, configs)
            except Exception as exc:
                out[f"{name}.{cls_name}"] = f"{type(exc).__name__}: {exc}"[:100]
    return out


def _source(cls) -> str:
    import inspect
    try:
        return inspect.getsource(cls)
    except (OSError, TypeError):
        return ""


GROUPED = {"n_group": 2, "topk_group": 1, "num_experts_per_tok": 2, "num_experts": 8, "n_routed_experts": 8,
           "num_local_experts": 8}


def _grouped(cfg, source: str):
    """A copy of ``cfg`` whose router groups its experts (``GROUPED``), with the group-limited
    method where the router has one."""
    import copy
    cfg = copy.deepcopy(cfg)
    for key, value in GROUPED.items():
        if hasattr(cfg, key):
            setattr(cfg, key, value)
    if hasattr(cfg, "topk_method") and "group_limited_greedy" in source:
        cfg.topk_method = "group_limited_greedy"
    return cfg


def _router_run(cls, configs: List[object]) -> dict:
    notes = []
    source = _source(cls)
    for cfg in configs:
        seed(0)
        try:
            router = cls(_grouped(cfg, source))
        except Exception as exc:
            notes.append(f"build: {type(exc).__name__}: {exc}"[:100])
            continue
        gen = torch.Generator().manual_seed(7)
        with torch.no_grad():
            for p in router.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype))
        width = getattr(router, "hidden_dim", None) or getattr(router, "hidden_size", None) or cfg.hidden_size
        hidden = torch.randn(TOKENS, width, generator=gen).requires_grad_()
        try:
            got = router(hidden)
            outs = [t for t in (got if isinstance(got, tuple) else (got,)) if isinstance(t, torch.Tensor)]
            floats = [t for t in outs if t.is_floating_point() and t.requires_grad]
            if floats:
                sum((t.double() * torch.randn(t.shape, generator=gen, dtype=torch.float64)).sum() for t in floats).backward()
        except Exception as exc:
            notes.append(f"run: {type(exc).__name__}: {exc}"[:100])
            continue
        return {"outputs": [t.detach() for t in outs], "hidden_grad": hidden.grad,
                "grads": {n: p.grad for n, p in router.named_parameters() if p.grad is not None}, "notes": notes}
    raise RuntimeError("; ".join(notes)[:300] or "no config")


@group("moe_routers")
def _moe_routers() -> dict:
    import transformers
    root = pathlib.Path(transformers.__file__).parent
    out: Dict[str, object] = {}
    for path in sorted((root / "models").rglob("modeling_*.py")):
        text = path.read_text(encoding="utf-8")
        if "group_mask" not in text:
            continue
        name = "transformers." + ".".join(path.relative_to(root).with_suffix("").parts)
        try:
            module = importlib.import_module(name)
            configs = _configs(module)
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"[:100]
            continue
        for cls_name in sorted(re.findall(r"^class (\w+Router)\(", text, re.M)):
            cls = getattr(module, cls_name, None)
            if cls is None or "group_mask" not in _source(cls):
                continue
            try:
                out[f"{name}.{cls_name}"] = _router_run(cls, configs)
            except Exception as exc:
                out[f"{name}.{cls_name}"] = f"{type(exc).__name__}: {exc}"[:100]
    return out


def _prompt_run(cls, configs: List[object]) -> dict:
    notes = []
    for cfg in configs:
        seed(0)
        try:
            encoder = cls(cfg)
        except Exception as exc:
            notes.append(f"build: {type(exc).__name__}: {exc}"[:100])
            continue
        gen = torch.Generator().manual_seed(8)
        size = float(getattr(encoder, "input_image_size", 64) or 64)
        points = (torch.rand(1, 1, 2, 2, generator=gen) * size).requires_grad_()
        labels = torch.tensor([[[1, 0]]])
        boxes = torch.tensor([[[0.1, 0.2, 0.6, 0.7]]]).mul(size).requires_grad_()
        try:
            got = encoder(input_points=points, input_labels=labels, input_boxes=boxes, input_masks=None)
            outs = [t for t in (got if isinstance(got, tuple) else (got,)) if isinstance(t, torch.Tensor) and t.is_floating_point()]
            wanted = [t for t in outs if t.requires_grad]
            if wanted:
                sum((t.double() * torch.randn(t.shape, generator=gen, dtype=torch.float64)).sum() for t in wanted).backward()
        except Exception as exc:
            notes.append(f"run: {type(exc).__name__}: {exc}"[:100])
            continue
        return {"outputs": [t.detach() for t in outs], "points_grad": points.grad, "boxes_grad": boxes.grad,
                "grads": {n: p.grad for n, p in encoder.named_parameters() if p.grad is not None}, "notes": notes}
    raise RuntimeError("; ".join(notes)[:300] or "no config")


@group("prompt_encoders")
def _prompt_encoders() -> dict:
    import transformers
    root = pathlib.Path(transformers.__file__).parent
    out: Dict[str, object] = {}
    for path in sorted((root / "models").rglob("modeling_*.py")):
        text = path.read_text(encoding="utf-8")
        if "def _embed_boxes(" not in text:
            continue
        name = "transformers." + ".".join(path.relative_to(root).with_suffix("").parts)
        try:
            module = importlib.import_module(name)
            configs = _configs(module)
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"[:100]
            continue
        for cls_name in sorted(re.findall(r"^class (\w+PromptEncoder)\(", text, re.M)):
            cls = getattr(module, cls_name, None)
            if cls is None or "_embed_boxes" not in vars(cls):
                continue
            try:
                out[f"{name}.{cls_name}"] = _prompt_run(cls, configs)
            except Exception as exc:
                out[f"{name}.{cls_name}"] = f"{type(exc).__name__}: {exc}"[:100]
    return out


def _attention(cls, configs: List[object]):
    notes = []
    for cfg in configs:
        for args in ((cfg, 0), (cfg,)):
            seed(0)
            try:
                return cls(*args), notes
            except Exception as exc:
                notes.append(f"build: {type(exc).__name__}: {exc}"[:100])
    raise RuntimeError("; ".join(notes)[:300] or "no config")


@group("mla_expand_kv")
def _mla_expand_kv() -> dict:
    import transformers
    root = pathlib.Path(transformers.__file__).parent
    out: Dict[str, object] = {}
    for path in sorted((root / "models").rglob("modeling_*.py")):
        text = path.read_text(encoding="utf-8")
        if "def expand_kv(" not in text:
            continue
        name = "transformers." + ".".join(path.relative_to(root).with_suffix("").parts)
        try:
            module = importlib.import_module(name)
            configs = _configs(module)
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"[:100]
            continue
        for cls_name in sorted(re.findall(r"^class (\w+)\(", text, re.M)):
            cls = getattr(module, cls_name, None)
            if not isinstance(cls, type) or "expand_kv" not in vars(cls):
                continue
            try:
                attn, notes = _attention(cls, configs)
                gen = torch.Generator().manual_seed(9)
                latents = torch.randn(2, 1, 5, attn.kv_lora_rank, generator=gen).requires_grad_()
                rotary = torch.randn(2, 1, 5, attn.qk_rope_head_dim, generator=gen).requires_grad_()
                keys, values = attn.expand_kv(latents, rotary)
                ((keys.double() * torch.randn(keys.shape, generator=gen, dtype=torch.float64)).sum()
                 + (values.double() * torch.randn(values.shape, generator=gen, dtype=torch.float64)).sum()).backward()
                out[f"{name}.{cls_name}"] = {"keys": keys.detach(), "values": values.detach(), "latents_grad": latents.grad,
                                             "rotary_grad": rotary.grad, "notes": notes,
                                             "grads": {n: p.grad for n, p in attn.named_parameters() if p.grad is not None}}
            except Exception as exc:
                out[f"{name}.{cls_name}"] = f"{type(exc).__name__}: {exc}"[:100]
    return out


def _fill(part: torch.nn.Module) -> None:
    """Seeded values in every floating parameter and buffer first: a module built outside its
    model holds ``torch.empty`` memory where the model's init would have written (the original
    run against itself differed there), and a branch may read before it writes."""
    gen = torch.Generator().manual_seed(10)
    with torch.no_grad():
        for t in [*part.parameters(), *part.buffers()]:
            if t.is_floating_point():
                t.copy_(torch.randn(t.shape, generator=gen, dtype=t.dtype))


INIT_WRITES = ("grid_init", "empty_weight", "recurrent_param", "weight[:, :, ", "pe[:")


def _build_with(cls, cfg):
    """``cls`` built from ``cfg``: the config for a parameter named like one, the config's value
    (or its encoder's) for another required one, else 2."""
    import inspect
    args = []
    for name, p in list(inspect.signature(cls.__init__).parameters.items())[1:]:
        if p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if "config" in name:
            args.append(cfg)
        else:
            value = getattr(cfg, name, None)
            value = value if isinstance(value, int) else getattr(cfg, f"encoder_{name}", None)
            args.append(value if isinstance(value, int) and not isinstance(value, bool) else 2)
    return cls(*args)


@group("init_weights")
def _init_weights() -> dict:
    import transformers
    root = pathlib.Path(transformers.__file__).parent
    out: Dict[str, object] = {}
    for path in sorted((root / "models").rglob("modeling_*.py")):
        text = path.read_text(encoding="utf-8")
        if "def _init_weights(" not in text or not any(w in text for w in INIT_WRITES):
            continue
        name = "transformers." + ".".join(path.relative_to(root).with_suffix("").parts)
        try:
            module = importlib.import_module(name)
            configs = _configs(module)
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"[:100]
            continue
        for base_name in sorted(n for n in vars(module) if n.endswith("PreTrainedModel")):
            base = getattr(module, base_name)
            if not isinstance(base, type) or "_init_weights" not in vars(base) or not configs:
                continue
            source = _source(base._init_weights) if hasattr(base, "_init_weights") else ""
            if not any(w in source for w in INIT_WRITES):
                continue
            tested = sorted(set(re.findall(r"isinstance\(module, \(?([\w, ]+)\)?\)", source)))
            for cls_name in sorted({c.strip() for group_ in tested for c in group_.split(",") if c.strip()}):
                cls = getattr(module, cls_name, None)
                if not isinstance(cls, type) or issubclass(cls, base) or not issubclass(cls, torch.nn.Module):
                    continue
                key = f"{name}.{base_name}.{cls_name}"
                notes = []
                for cfg in configs:
                    seed(0)
                    try:
                        part = _build_with(cls, cfg)
                        owner = base.__new__(base)
                        torch.nn.Module.__init__(owner)
                        owner.config = configs[0]
                        _fill(part)
                        seed(1)
                        part.apply(owner._init_weights)  # as the model's init does: every submodule
                        out[key] = {"module": part, "notes": notes}
                        break
                    except Exception as exc:
                        notes.append(f"{type(exc).__name__}: {exc}"[:100])
                else:
                    out[key] = "; ".join(notes)[:300] or "no config"
    return out
