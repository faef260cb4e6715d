"""The sweep's cases, by name (``family:argument``), and the plan: which cases the rewritten files
call for. Every case returns what it leaves behind (``state.state_of`` turns it into tensors)."""

from __future__ import annotations

import collections
import pathlib
from typing import Callable, Dict, List

import torch

from migration import cases
from migration.cases import seed, train_step

MAKERS: Dict[str, Callable[[str], object]] = {}


def maker(prefix: str):
    def register(fn):
        MAKERS[prefix] = fn
        return fn
    return register


def make(name: str):
    if ":" not in name:
        return cases.CASES[name]()
    prefix, arg = name.split(":", 1)
    if prefix not in MAKERS:  # the issue-24 code bases' cases live in a module of their own
        from migration import sweep_libs24  # noqa: F401 (registers its maker)
    return MAKERS[prefix](arg)


# ---- transformers ---------------------------------------------------------------------------------

@maker("tf")
def _tf(model_type: str):
    from migration import sweep_transformers
    return sweep_transformers.model_case(model_type)


@maker("tf2")
def _tf2(model_type: str):
    from migration import sweep_transformers
    return sweep_transformers.model_case(model_type, version=2)


@maker("tfc")
def _tfc(path: str):
    from migration import sweep_reach
    return sweep_reach.class_case(path)


@maker("tfcpad")
def _tfcpad(path: str):
    """A ``tfc:`` class with a padding attention mask (``sweep_reach.padded``)."""
    from migration import sweep_reach
    return sweep_reach.class_case(path, pad=True)


@maker("dfm")
def _dfm(path: str):
    from migration import sweep_reach
    return sweep_reach.diffusers_case(path)


@maker("fn")
def _fn(group: str):
    from migration import sweep_functions
    return sweep_functions.case(group)


@maker("tfimg")
def _tfimg(folder: str):
    from migration import sweep_transformers
    return sweep_transformers.image_processor_case(folder)


# ---- torchvision ----------------------------------------------------------------------------------

# One small builder per module file (the smallest of the file's models), and the input it takes.
TV_MODELS = {
    "alexnet": ["alexnet"], "vgg": ["vgg11_bn"], "squeezenet": ["squeezenet1_0", "squeezenet1_1"],
    "shufflenetv2": ["shufflenet_v2_x0_5"], "densenet": ["densenet121"], "mnasnet": ["mnasnet0_5"],
    "swin_transformer": ["swin_t", "swin_v2_t"], "googlenet": ["googlenet"], "inception": ["inception_v3"],
    "mobilenetv2": ["mobilenet_v2"], "mobilenetv3": ["mobilenet_v3_small"], "regnet": ["regnet_y_400mf"],
    "resnet": ["resnet18", "resnext50_32x4d"], "efficientnet": ["efficientnet_b0", "efficientnet_v2_s"],
    "convnext": ["convnext_tiny"], "maxvit": ["maxvit_t"], "vision_transformer": ["vit_b_32"],
}
TV_INPUT = {"inception_v3": 80, "maxvit_t": 224, "vit_b_32": 224, "swin_t": 64, "swin_v2_t": 64, "alexnet": 64,
            "vgg11_bn": 32, "googlenet": 64}


@maker("tv")
def _tv(builder: str):
    import torchvision.models as M
    seed(0)
    if builder in ("r3d_18", "mc3_18", "r2plus1d_18", "s3d", "mvit_v2_s", "swin3d_t"):
        from torchvision.models import video
        model = getattr(video, builder)(num_classes=10)
        x = torch.randn(1, 3, 4 if builder != "mvit_v2_s" else 16, 32 if builder not in ("mvit_v2_s",) else 224,
                        32 if builder not in ("mvit_v2_s",) else 224)
        return train_step(model, lambda m: m(x))
    if builder.startswith(("lraspp", "deeplabv3", "fcn")):
        from torchvision.models import segmentation
        model = getattr(segmentation, builder)(num_classes=4, weights_backbone=None, aux_loss=None)
        x = torch.randn(2, 3, 64, 64)
        return train_step(model, lambda m: m(x))
    if builder in DETECTION:
        return _detection(builder)
    if builder == "raft_small":
        from torchvision.models.optical_flow import raft_small
        model = raft_small()
        a, b = torch.randn(1, 3, 64, 64), torch.randn(1, 3, 64, 64)
        return train_step(model, lambda m: m(a, b, num_flow_updates=2))
    kwargs = {"aux_logits": False, "init_weights": True} if builder in ("inception_v3", "googlenet") else {}
    model = getattr(M, builder)(num_classes=10, **kwargs)
    size = TV_INPUT.get(builder, 32)
    x = torch.randn(2, 3, size, size)
    return train_step(model, lambda m: m(x))


# Trained with targets (losses); the R-CNNs need torchvision's compiled ops (nms, roi_align), which the
# CUDA wheel next to CPU torch lacks (see the real-code note): left out.
DETECTION = {"ssd300_vgg16", "ssdlite320_mobilenet_v3_large", "retinanet_resnet50_fpn", "fcos_resnet50_fpn"}


def _detection(builder: str):
    from torchvision.models import detection
    seed(0)
    kwargs = dict(num_classes=3, weights_backbone=None)
    if builder == "keypointrcnn_resnet50_fpn":
        kwargs = dict(num_classes=2, num_keypoints=3, weights_backbone=None)
    if builder not in ("ssd300_vgg16", "ssdlite320_mobilenet_v3_large"):
        kwargs.update(min_size=64, max_size=64)
    model = getattr(detection, builder)(**kwargs)
    images = [torch.rand(3, 64, 64), torch.rand(3, 64, 64)]
    targets = []
    for i in range(2):
        boxes = torch.tensor([[4.0, 6.0, 30.0, 40.0], [20.0, 10.0, 60.0, 50.0]]) + i
        t = {"boxes": boxes, "labels": torch.tensor([1, 2 if builder != "keypointrcnn_resnet50_fpn" else 1])}
        if builder == "maskrcnn_resnet50_fpn":
            masks = torch.zeros(2, 64, 64, dtype=torch.uint8)
            masks[0, 6:40, 4:30] = 1
            masks[1, 10:50, 20:60] = 1
            t["masks"] = masks
        if builder == "keypointrcnn_resnet50_fpn":
            t["keypoints"] = torch.tensor([[[10.0, 10.0, 1], [20.0, 30.0, 1], [25.0, 12.0, 1]],
                                           [[30.0, 20.0, 1], [50.0, 40.0, 1], [40.0, 30.0, 1]]])
        targets.append(t)
    return train_step(model, lambda m: m(images, targets))  # (eval needs torchvision's C++ nms: not here)


@maker("tvt")
def _tvt(group: str):
    """torchvision transforms: v2 transforms over an image, boxes in three formats and a mask;
    v2 box format conversions and clamping; v1 tensor functionals."""
    from torchvision import tv_tensors
    from torchvision.transforms import v2
    from torchvision.transforms.v2 import functional as F
    out = {}
    if group == "v2":
        specs = {
            "affine": lambda: v2.RandomAffine(degrees=30, translate=(0.1, 0.1), scale=(0.8, 1.2), shear=10),
            "perspective": lambda: v2.RandomPerspective(p=1.0), "rotation": lambda: v2.RandomRotation(40, expand=True),
            "rotation_center": lambda: v2.RandomRotation(25, center=[10, 12]),
            "resized_crop": lambda: v2.RandomResizedCrop(24), "crop": lambda: v2.RandomCrop(20, padding=3),
            "hflip": lambda: v2.RandomHorizontalFlip(1.0), "vflip": lambda: v2.RandomVerticalFlip(1.0),
            "elastic": lambda: v2.ElasticTransform(alpha=20.0), "zoom_out": lambda: v2.RandomZoomOut(p=1.0),
            "iou_crop": lambda: v2.RandomIoUCrop(), "pad": lambda: v2.Pad([2, 3, 4, 5], padding_mode="reflect"),
            "center_crop": lambda: v2.CenterCrop(20), "resize": lambda: v2.Resize((20, 28)),
            "scale_jitter": lambda: v2.ScaleJitter((32, 32)), "short_side": lambda: v2.RandomShortestSize([20, 28]),
            "five_crop": lambda: v2.FiveCrop(16), "color": lambda: v2.ColorJitter(0.4, 0.4, 0.4, 0.2),
            "photometric": lambda: v2.RandomPhotometricDistort(p=1.0), "gray": lambda: v2.RandomGrayscale(1.0),
            "equalize": lambda: v2.RandomEqualize(1.0), "posterize": lambda: v2.RandomPosterize(3, 1.0),
            "solarize": lambda: v2.RandomSolarize(100, 1.0), "autocontrast": lambda: v2.RandomAutocontrast(1.0),
            "sharpness": lambda: v2.RandomAdjustSharpness(2.0, 1.0), "invert": lambda: v2.RandomInvert(1.0),
            "autoaugment": lambda: v2.AutoAugment(), "randaugment": lambda: v2.RandAugment(),
            "trivial": lambda: v2.TrivialAugmentWide(), "augmix": lambda: v2.AugMix(),
            "blur": lambda: v2.GaussianBlur(5, (0.5, 1.5)), "noise": lambda: v2.GaussianNoise(),
            "erasing": lambda: v2.RandomErasing(1.0), "jpeg": lambda: v2.JPEG((50, 90)),
            "sanitize": lambda: v2.Compose([v2.RandomAffine(degrees=60, translate=(0.4, 0.4)), v2.ClampBoundingBoxes(),
                                             v2.SanitizeBoundingBoxes(labels_getter=None)]),
        }
        for fmt in ("XYXY", "XYWH", "CXCYWH"):
            for name, make_t in specs.items():
                seed(0)
                img = tv_tensors.Image((torch.rand(3, 32, 40) * 255).to(torch.uint8))
                boxes = torch.tensor([[4.0, 5.0, 20.0, 25.0], [10.0, 2.0, 30.0, 18.0]])
                boxes = F.convert_bounding_box_format(boxes, old_format=tv_tensors.BoundingBoxFormat.XYXY,
                                                      new_format=getattr(tv_tensors.BoundingBoxFormat, fmt))
                boxes = tv_tensors.BoundingBoxes(boxes, format=fmt, canvas_size=(32, 40))
                mask = tv_tensors.Mask((torch.rand(32, 40) > 0.5).to(torch.uint8))
                sample = {"image": img, "boxes": boxes, "mask": mask, "float": tv_tensors.Image(torch.rand(3, 32, 40))}
                try:
                    got = make_t()(sample)
                    out[f"{name}_{fmt}"] = {"in_boxes": boxes.as_subclass(torch.Tensor), "got": _plain(got)}
                except Exception as exc:
                    out[f"{name}_{fmt}"] = f"{type(exc).__name__}: {exc}"[:100]
    elif group == "meta":
        base = torch.tensor([[4.0, 5.0, 20.0, 25.0], [10.0, 2.0, 50.0, 38.0], [-3.0, -2.0, 8.0, 6.0]])
        formats = list(tv_tensors.BoundingBoxFormat)
        for a in formats:
            for b in formats:
                for dtype in (torch.float32, torch.int64):
                    x = base.clone().to(dtype) if "XYXYXYXY" not in a.name else None
                    if x is None or "XYXYXYXY" in b.name:
                        continue
                    try:
                        got = F.convert_bounding_box_format(x, old_format=a, new_format=b, inplace=False)
                        x2 = x.clone()
                        got2 = F.convert_bounding_box_format(x2, old_format=a, new_format=b, inplace=True)
                        out[f"{a.name}_{b.name}_{dtype}"] = {"x": x, "got": got, "x2": x2, "got2": got2}
                    except Exception as exc:
                        out[f"{a.name}_{b.name}_{dtype}"] = f"{type(exc).__name__}: {exc}"[:100]
            x = base.clone()
            try:
                out[f"clamp_{a.name}"] = {"x": x, "got": F.clamp_bounding_boxes(x, format=a, canvas_size=(30, 40))}
            except Exception as exc:
                out[f"clamp_{a.name}"] = f"{type(exc).__name__}: {exc}"[:100]
        for name in ("get_size", "get_num_channels"):
            out[name] = torch.tensor(getattr(F, name)(torch.rand(3, 8, 9)))
    elif group == "v1":
        import torchvision.transforms.functional as TF
        seed(0)
        img = torch.rand(3, 20, 24)
        u8 = (img * 255).to(torch.uint8)
        for name, fn in {"hue": lambda x: TF.adjust_hue(x, 0.2), "sat": lambda x: TF.adjust_saturation(x, 1.5),
                         "contrast": lambda x: TF.adjust_contrast(x, 0.6), "gamma": lambda x: TF.adjust_gamma(x, 1.3),
                         "sharp": lambda x: TF.adjust_sharpness(x, 2.0), "autocontrast": TF.autocontrast,
                         "equalize": TF.equalize, "invert": TF.invert, "posterize": lambda x: TF.posterize(x, 3),
                         "solarize": lambda x: TF.solarize(x, 100 if x.dtype == torch.uint8 else 0.4),
                         "affine": lambda x: TF.affine(x, 20.0, [2, 3], 1.1, [5.0, 3.0]),
                         "rotate": lambda x: TF.rotate(x, 33.0, expand=True),
                         "perspective": lambda x: TF.perspective(x, [[0, 0], [23, 0], [23, 19], [0, 19]], [[2, 1], [20, 3], [22, 18], [1, 17]]),
                         "erase": lambda x: TF.erase(x.clone(), 2, 3, 5, 6, torch.zeros(1)),
                         "blur": lambda x: TF.gaussian_blur(x, [5, 5]), "gray": lambda x: TF.rgb_to_grayscale(x),
                         "pad": lambda x: TF.pad(x, [2, 3], padding_mode="symmetric")}.items():
            for label, x in (("float", img.clone()), ("uint8", u8.clone())):
                try:
                    out[f"{name}_{label}"] = {"x": x, "got": fn(x)}
                except Exception as exc:
                    out[f"{name}_{label}"] = f"{type(exc).__name__}: {exc}"[:100]
    return out


def _plain(obj):
    if isinstance(obj, torch.Tensor):
        return obj.as_subclass(torch.Tensor)
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


# ---- timm -----------------------------------------------------------------------------------------

@maker("timm")
def _timm(arch: str):
    import timm
    try:  # count on the meta device first: building a big one for real takes long
        with torch.device("meta"):
            n = sum(p.numel() for p in timm.create_model(arch, pretrained=False, num_classes=10).parameters())
    except Exception:
        n = 0
    if n > 40_000_000:
        raise ValueError(f"{arch} has {n} parameters")
    seed(0)
    model = None
    for kwargs in (dict(drop_path_rate=0.1, img_size=64), dict(img_size=64), dict(drop_path_rate=0.1), {}):
        try:  # 64x64 where the model takes an image size (ViTs) or any size (CNNs), else its own
            model = timm.create_model(arch, pretrained=False, num_classes=10, **kwargs)
            break
        except TypeError:
            continue
    if model is None:
        raise ValueError(f"{arch}: no way to build it")
    fixed = "img_size" not in kwargs and (model.pretrained_cfg or {}).get("fixed_input_size", False)
    size = (model.pretrained_cfg or {}).get("input_size", (3, 224, 224))[-1] if fixed else 64
    n = sum(p.numel() for p in model.parameters())
    if n > 40_000_000:
        raise ValueError(f"{arch} has {n} parameters")
    x = torch.randn(2, 3, size, size)  # two: batch norm in train mode wants more than one value
    return train_step(model, lambda m: m(x))


def timm_models_of(module: str, many: bool = False) -> List[str]:
    """The smallest-looking model of a timm module file (by name); with ``many``, all of them,
    smallest-looking first."""
    import timm
    names = timm.list_models(module=module)
    if not names:
        return []
    order = ("atto", "femto", "pico", "nano", "tiny", "xxs", "xs", "small", "_s", "18", "050", "b0", "lite", "mini")

    def rank(n):
        for i, key in enumerate(order):
            if key in n:
                return (i, len(n), n)
        return (len(order), len(n), n)
    return sorted(names, key=rank)[: None if many else 1]


# ---- diffusers schedulers, transformers logits processors ----------------------------------------

@maker("sched")
def _sched(cls_name: str):
    import diffusers
    cls = getattr(diffusers, cls_name)
    seed(0)
    sched = cls()
    sched.set_timesteps(6)
    sample = torch.randn(1, 4, 8, 8)
    out = {"timesteps": sched.timesteps.clone()}
    gen = torch.Generator().manual_seed(1)
    for i, t in enumerate(sched.timesteps):
        model_out = torch.randn(1, 4, 8, 8, generator=gen)
        sample = sched.scale_model_input(sample, t) if hasattr(sched, "scale_model_input") else sample
        step = sched.step(model_out, t, sample, generator=torch.Generator().manual_seed(i), return_dict=True)
        sample = step.prev_sample
        out[f"step{i}"] = sample.clone()
    return out


@maker("lp")
def _logits_processors(which: str):
    from transformers import generation as G
    procs = {
        "temperature": lambda: G.TemperatureLogitsWarper(0.7), "rep": lambda: G.RepetitionPenaltyLogitsProcessor(1.3),
        "enc_rep": lambda: G.EncoderRepetitionPenaltyLogitsProcessor(1.3, torch.tensor([[1, 2, 3], [4, 5, 6]])),
        "topk": lambda: G.TopKLogitsWarper(5), "topp": lambda: G.TopPLogitsWarper(0.8), "minp": lambda: G.MinPLogitsWarper(0.1),
        "typical": lambda: G.TypicalLogitsWarper(0.9), "eps": lambda: G.EpsilonLogitsWarper(0.01), "eta": lambda: G.EtaLogitsWarper(0.01),
        "ngram": lambda: G.NoRepeatNGramLogitsProcessor(2), "minlen": lambda: G.MinLengthLogitsProcessor(10, eos_token_id=3),
        "minnew": lambda: G.MinNewTokensLengthLogitsProcessor(2, 3, eos_token_id=3),
        "bad": lambda: G.NoBadWordsLogitsProcessor([[5], [6, 7]], eos_token_id=3),
        "prefix": lambda: G.PrefixConstrainedLogitsProcessor(lambda b, ids: [1, 2, 3, 4], 1),
        "forced_bos": lambda: G.ForcedBOSTokenLogitsProcessor(2), "forced_eos": lambda: G.ForcedEOSTokenLogitsProcessor(8, 3),
        "inf_nan": lambda: G.InfNanRemoveLogitsProcessor(), "exp_decay": lambda: G.ExponentialDecayLengthPenalty((2, 1.5), 3, 4),
        "suppress": lambda: G.SuppressTokensLogitsProcessor([4, 5]), "suppress_begin": lambda: G.SuppressTokensAtBeginLogitsProcessor([6], 4),
        "seq_bias": lambda: G.SequenceBiasLogitsProcessor({(5,): 2.0, (6, 7): -3.0}),
        "cfg": lambda: G.UnbatchedClassifierFreeGuidanceLogitsProcessor(1.5, None) if False else G.ClassifierFreeGuidanceLogitsProcessor(1.5),
        "hamming": lambda: G.HammingDiversityLogitsProcessor(0.5, 4, 2),
        "renorm": lambda: G.LogitNormalization(), "watermark": lambda: G.WatermarkLogitsProcessor(20, "cpu"),
        "barkeos": lambda: G.BarkEosPrioritizerLogitsProcessor(3, 0.5) if hasattr(G, "BarkEosPrioritizerLogitsProcessor") else None,
        "whisper_ts": None,
    }
    out = {}
    for name, make_p in procs.items():
        if make_p is None:
            continue
        seed(0)
        ids = torch.tensor([[1, 5, 6, 7, 5, 6], [2, 3, 9, 9, 4, 1], [1, 5, 6, 7, 5, 6], [2, 3, 9, 9, 4, 1]])
        scores = torch.randn(4, 20)
        scores[1, 3] = float("nan") if name == "inf_nan" else scores[1, 3]
        scores_in = scores.clone()
        try:
            proc = make_p()
            if proc is None:
                continue
            got = proc(ids, scores) if name != "hamming" else proc(ids, scores, torch.tensor([0, 1, 2, 3]), 0)
            out[name] = {"scores_after": scores, "returned": got, "scores_in": scores_in}
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"[:100]
    return out


# ---- the plan -------------------------------------------------------------------------------------

def plan(files: List[str]) -> List[str]:
    from migration import sweep_transformers
    names = list(cases.CASES)
    folders = collections.OrderedDict()
    img = set()
    for rel in files:
        parts = rel.split("/")
        if parts[:2] == ["transformers", "models"] and len(parts) > 3:
            if parts[3].startswith(("modeling_", "configuration_")):
                folders[parts[2]] = True
            elif parts[3].startswith("image_processing"):
                img.add(parts[2])
    names += [f"tf:{mt}" for mt in sweep_transformers.model_types_of(list(folders))]
    names += [f"tfimg:{f}" for f in sorted(img)]
    if "transformers/generation/logits_process.py" in files:
        names += ["lp:all", "fn:logits_edges"]
    if any(rel.startswith("transformers/models/") for rel in files):  # helpers many modeling files copy
        from migration import sweep_functions
        names += [f"fn:{g}" for g in sweep_functions.GROUPS if g != "logits_edges"]
    tv_mods = {rel.split("/")[-1][:-3] for rel in files if rel.startswith("torchvision/models/")}
    for mod, builders in TV_MODELS.items():
        if mod in tv_mods:
            names += [f"tv:{b}" for b in builders]
    if "video" in {rel.split("/")[2] for rel in files if rel.startswith("torchvision/models/") and rel.count("/") > 2}:
        names += ["tv:r3d_18", "tv:r2plus1d_18", "tv:mc3_18", "tv:s3d"]
    if any(rel.startswith("torchvision/models/detection/") for rel in files):
        names += [f"tv:{b}" for b in sorted(DETECTION)]
    if any(rel.startswith("torchvision/models/segmentation/") for rel in files):
        names += ["tv:lraspp_mobilenet_v3_large", "tv:deeplabv3_mobilenet_v3_large", "tv:fcn_resnet50"]
    if any(rel.startswith("torchvision/models/optical_flow/") for rel in files):
        names.append("tv:raft_small")
    if any(rel.startswith("torchvision/transforms/") for rel in files):
        names += ["tvt:v2", "tvt:meta", "tvt:v1"]
    for rel in files:
        if rel.startswith("timm/models/") and rel.count("/") == 2 and not rel.endswith("__init__.py"):
            names += [f"timm:{m}" for m in timm_models_of(rel.split("/")[-1][:-3])]
        if rel.startswith("diffusers/schedulers/scheduling_"):
            names += [f"sched:{c}" for c in schedulers_of(rel)]
    names += [f"doc:{m}" for m in doc_modules(files)]
    if any(rel.startswith("kornia/") for rel in files):
        names += [f"kx:{g}" for g in ("laf", "geometry", "boxes", "sift")]
    seen, out = set(), []
    for n in names:
        if n not in seen:
            seen.add(n)
            out.append(n)
    return out


def schedulers_of(rel: str) -> List[str]:
    """The scheduler classes a diffusers scheduler file defines (read from its text; diffusers
    exports them by name)."""
    import re
    import diffusers
    text = (pathlib.Path(diffusers.__file__).parent.parent / rel).read_text(encoding="utf-8")
    return [n for n in re.findall(r"^class (\w+Scheduler)\(", text, flags=re.M) if hasattr(diffusers, n)]


# ---- doctests (kornia documents most functions with runnable examples) -----------------------------

@maker("doc")
def _doc(module: str):
    """Every docstring example of a module, run in order (seeded before each docstring); what each
    left behind: its printed output and the tensors it bound."""
    import contextlib
    import doctest
    import importlib
    import io
    mod = importlib.import_module(module)
    out = {}
    for test in sorted(doctest.DocTestFinder(recurse=True).find(mod, module), key=lambda t: t.name):
        if not test.examples or not test.name.startswith(module):
            continue
        seed(0)
        globs = dict(test.globs)
        printed = io.StringIO()
        error = ""
        with contextlib.redirect_stdout(printed):
            for example in test.examples:
                try:
                    code = compile(example.source, f"<doctest {test.name}>", "single")
                    exec(code, globs)
                except BaseException as exc:  # the rest of this docstring depends on it
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    error = f"{type(exc).__name__}: {exc}"[:100]
                    break
        tensors = {k: v for k, v in globs.items() if isinstance(v, torch.Tensor) and k not in test.globs}
        out[test.name] = {"printed": printed.getvalue()[-4000:], "error": error, "tensors": tensors}
    return out


def doc_modules(files: List[str]) -> List[str]:
    """Modules of the rewritten files whose docstrings hold examples (kornia, torchvision ops)."""
    out = []
    for rel in files:
        if rel.startswith(("kornia/", "torchvision/ops/", "diffusers/utils/torch_utils")) and rel.endswith(".py"):
            mod = rel[:-3].replace("/", ".").removesuffix(".__init__")
            out.append(mod)
    return out


# ---- single components with grad (diffusers blocks, timm data helpers) ----------------------------

def module_grad(module: torch.nn.Module, *inputs: torch.Tensor) -> dict:
    """Run a component on inputs requiring grad, backward with fixed float64 cotangents: its
    outputs, the inputs' gradients and its parameters' gradients."""
    xs = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    seed(1)
    outputs = cases.floats(module(*xs))
    gen = torch.Generator().manual_seed(2)
    if outputs and any(t.requires_grad for t in outputs):
        sum((t.double() * torch.randn(t.shape, generator=gen, dtype=torch.float64)).sum()
            for t in outputs if t.requires_grad).backward()
    return {"outputs": [t.detach() for t in outputs], "inputs": xs, "module": module}


@maker("comp")
def _component(which: str):
    out = {}
    if which == "diffusers":
        from diffusers.models import downsampling, embeddings, lora, upsampling
        from diffusers.models.unets import unet_1d_blocks as u1
        from diffusers.utils.torch_utils import fourier_filter
        seed(0)
        makers = {
            "down1d": lambda: (u1.Downsample1d("cubic"), torch.randn(2, 4, 16)),
            "up1d": lambda: (u1.Upsample1d("cubic"), torch.randn(2, 4, 16)),
            "selfattn1d": lambda: (u1.SelfAttention1d(8, n_head=2, dropout_rate=0.0), torch.randn(2, 8, 6)),
            "kdown2d": lambda: (downsampling.KDownsample2D(), torch.randn(2, 3, 8, 8)),
            "kup2d": lambda: (upsampling.KUpsample2D(), torch.randn(2, 3, 8, 8)),
            "lora_linear": lambda: (lora.LoRALinearLayer(8, 6, rank=2, network_alpha=4.0), torch.randn(3, 8)),
            "lora_conv": lambda: (lora.LoRAConv2dLayer(4, 6, rank=2, network_alpha=4.0), torch.randn(2, 4, 5, 5)),
            "sinusoidal": lambda: (embeddings.SinusoidalPositionalEmbedding(8, 16), torch.randn(2, 10, 8)),
        }
        for name, make_m in makers.items():
            seed(0)
            try:
                module, x = make_m()
                with torch.no_grad():
                    for p in module.parameters():  # LoRA's up starts at zero: give it values
                        p.add_(torch.randn_like(p) * 0.1)
                out[name] = module_grad(module, x)
            except Exception as exc:
                out[name] = f"{type(exc).__name__}: {exc}"[:100]
        seed(0)
        x = torch.randn(1, 4, 8, 8, requires_grad=True)
        y = fourier_filter(x, threshold=1, scale=0.5)
        y.sum().backward()
        out["fourier"] = {"y": y.detach(), "grad": x.grad}
        from diffusers.models.autoencoders.vae import VectorQuantizer
        for unknown in ("random", "extra"):
            seed(0)
            import numpy as np
            import os
            import tempfile
            path = os.path.join(tempfile.mkdtemp(), "used.npy")
            np.save(path, np.array([1, 3, 5]))
            vq = VectorQuantizer(8, 4, beta=0.25, remap=path, unknown_index=unknown, sane_index_shape=True)
            z = torch.randn(2, 4, 3, 3)
            try:
                zq, loss, info = vq(z)
                out[f"vq_{unknown}"] = {"zq": zq, "loss": loss, "inds": info[2]}
            except Exception as exc:
                out[f"vq_{unknown}"] = f"{type(exc).__name__}: {exc}"[:100]
    elif which == "timm_data":
        import numpy as np
        from timm.data.loader import fast_collate
        seed(0)
        rng = np.random.default_rng(0)
        batches = {
            "numpy": [((rng.random((3, 4, 4)) * 255).astype(np.uint8), i) for i in range(3)],
            "tensor": [(torch.randint(0, 255, (3, 4, 4), dtype=torch.uint8), i) for i in range(3)],
            "tuple": [(tuple((rng.random((3, 4, 4)) * 255).astype(np.uint8) for _ in range(2)), i) for i in range(3)],
        }
        for name, batch in batches.items():
            try:
                out[name] = fast_collate(batch)
            except Exception as exc:
                out[name] = f"{type(exc).__name__}: {exc}"[:100]
        try:
            from timm.data import target_transforms as tt
            for cls_name in dir(tt):
                cls = getattr(tt, cls_name)
                if isinstance(cls, type) and cls.__module__ == tt.__name__:
                    try:
                        t = cls(num_classes=6)
                        out[cls_name] = {"a": t(torch.tensor([1, 4])), "b": t(torch.tensor([], dtype=torch.long))}
                    except Exception as exc:
                        out[cls_name] = f"{type(exc).__name__}: {exc}"[:100]
        except ImportError as exc:
            out["target_transforms"] = f"{type(exc).__name__}"
    return out


# ---- kornia functions no docstring example runs (the reach report's most-unreached kornia files) ---

def _grad_run(fn, *inputs: torch.Tensor) -> dict:
    """``fn`` on inputs requiring grad (floats), backward with fixed float64 cotangents: its
    outputs and the inputs' gradients (what a training step would take from it)."""
    xs = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    outputs = cases.floats(fn(*xs))
    gen = torch.Generator().manual_seed(2)
    wanted = [t for t in outputs if t.requires_grad]
    if wanted:
        sum((t.double() * torch.randn(t.shape, generator=gen, dtype=torch.float64)).sum() for t in wanted).backward()
    return {"outputs": [t.detach() for t in outputs], "inputs": xs}


@maker("kx")
def _kornia_extra(group: str):
    """Kornia's LAF helpers, SIFT in scale space, the essential matrix, camera helpers, diamond-square
    noise and Boxes, each on small seeded inputs, with gradients where they take them."""
    import importlib
    out = {}
    seed(0)
    img = torch.rand(1, 1, 48, 56)
    lafs = torch.tensor([[[[6.0, 1.0, 20.0], [-1.0, 5.0, 24.0]], [[4.0, 0.0, 40.0], [0.0, 4.0, 10.0]],
                          [[3.0, 0.5, 2.0], [0.2, 3.0, 46.0]]]])

    def attempt(name, fn):
        seed(0)
        try:
            out[name] = fn()
        except Exception as exc:  # the same failure in every copy unless the rewrite changed something
            out[name] = f"{type(exc).__name__}: {exc}"[:100]
    if group == "laf":
        from kornia.feature import laf as L
        attempt("normalize", lambda: _grad_run(L.normalize_laf, lafs, img))
        attempt("denormalize", lambda: _grad_run(lambda x, i: L.denormalize_laf(L.normalize_laf(x, i), i), lafs, img))
        attempt("grid", lambda: _grad_run(lambda i, x: L.generate_patch_grid_from_normalized_LAF(i, L.normalize_laf(x, i), 8), img, lafs))
        attempt("patches", lambda: _grad_run(lambda i, x: L.extract_patches_from_pyramid(i, x, 8), img, lafs))
        attempt("patches_raw", lambda: _grad_run(lambda i, x: L.extract_patches_from_pyramid(i, x, 6, False), img, lafs))
        attempt("patches_empty", lambda: _grad_run(lambda i, x: L.extract_patches_from_pyramid(i, x, 8), img, lafs[:, :0]))
        attempt("inside", lambda: {"in": L.laf_is_inside_image(lafs, img, 2), "in0": L.laf_is_inside_image(lafs, img)})
    elif group == "sift":
        from kornia.feature import SIFTDescriptorFromPyramid, SIFTFeature, SIFTFeatureScaleSpace
        big = torch.rand(1, 1, 64, 64)
        attempt("scale_space", lambda: _grad_run(lambda i: SIFTFeatureScaleSpace(num_features=20, upright=False)(i), big))
        attempt("scale_space_upright", lambda: _grad_run(lambda i: SIFTFeatureScaleSpace(num_features=20, upright=True)(i), big))
        attempt("sift", lambda: _grad_run(lambda i: SIFTFeature(num_features=20)(i), big))
        attempt("pyramid_desc", lambda: _grad_run(lambda i, x: SIFTDescriptorFromPyramid()(i, x), big, lafs))
    elif group == "geometry":
        from kornia.geometry.camera import utils as C
        from kornia.geometry.epipolar import essential as E
        gen = torch.Generator().manual_seed(3)
        p1 = torch.rand(1, 8, 2, generator=gen)
        p2 = p1 + 0.05 * torch.rand(1, 8, 2, generator=gen)
        attempt("find_essential", lambda: _grad_run(lambda a, b: E.find_essential(a[:, :5], b[:, :5]), p1, p2))
        attempt("find_essential_w", lambda: _grad_run(lambda a, b, w: E.find_essential(a, b, w), p1, p2, torch.rand(1, 8, generator=gen)))
        emat = torch.randn(2, 3, 3, generator=gen)
        attempt("decompose", lambda: _grad_run(E.decompose_essential_matrix, emat))
        attempt("intrinsics", lambda: C.create_intrinsics([100.0, 90.0], [110.0, 95.0], [32.0, 30.0], [24.0, 20.0], "cpu", torch.float32))
        attempt("extrinsics", lambda: C.create_extrinsics_with_rotation([0.1, 0.5], [0.2, -0.3], [0.3, 0.0], [1.0, 2.0], [0.5, 0.0],
                                                                       [3.0, 1.0], "cpu", torch.float32))
        attempt("pinhole", lambda: {k: v for k, v in vars(C.create_pinhole_camera(48.0, 64.0, "cpu", torch.float32)).items()
                                    if isinstance(v, torch.Tensor)})
        ds = importlib.import_module("kornia.contrib.diamond_square")
        attempt("diamond_square", lambda: ds.diamond_square((2, 1, 17, 17), roughness=0.6, random_scale=1.2,
                                                            random_fn=lambda *a, **k: torch.rand(*a, **k, generator=gen)))
        attempt("diamond_square_norm", lambda: ds.diamond_square((1, 2, 9, 12), normalize_range=(0.0, 1.0),
                                                                 random_fn=lambda *a, **k: torch.rand(*a, **k, generator=gen)))
    elif group == "boxes":
        from kornia.geometry.boxes import Boxes, Boxes3D
        b = torch.tensor([[[2.0, 3.0, 10.0, 12.0], [0.0, 0.0, 4.0, 5.0]]])
        for mode in ("xyxy", "xyxy_plus", "xywh", "vertices", "vertices_plus"):
            def run_mode(mode=mode):
                boxes = Boxes.from_tensor(b.clone(), mode="xyxy")
                got = {"to": boxes.to_tensor(mode), "area": boxes.compute_area(), "data": boxes.data.clone(),
                       "shape": torch.tensor(boxes.shape if isinstance(boxes.shape, tuple) else tuple(boxes.shape))}
                got["back"] = Boxes.from_tensor(got["to"], mode=mode).to_tensor("xyxy") if mode != "xyxy_plus" else got["to"]
                got["mask"] = boxes.to_mask(16, 16)
                return got
            attempt(f"boxes_{mode}", run_mode)
        b3 = torch.tensor([[[1.0, 2.0, 3.0, 5.0, 6.0, 8.0], [0.0, 0.0, 0.0, 2.0, 2.0, 2.0]]])
        for mode in ("xyzxyz", "xyzwhd", "vertices"):
            attempt(f"boxes3d_{mode}", lambda mode=mode: {"to": Boxes3D.from_tensor(b3.clone()).to_tensor(mode),
                                                          "data": Boxes3D.from_tensor(b3.clone()).data.clone()})
    return out
