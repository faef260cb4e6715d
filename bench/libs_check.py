#!/usr/bin/env python
"""The libs check: the default report (proven hazards, IPF1xx) over 28 code bases, one line per finding.

Every proven finding these code bases give was labelled by running it (bench/hazard_labels.tsv,
bench/hazard_checks24/labels.tsv); a change that adds a line here adds a finding to label. Compare two
checkouts by running this with each one's `inplacefix` and diffing the outputs.

    python bench/libs_check.py --libs-python /work/venvs/real/bin/python --out main.txt
    python bench/libs_check.py --libs-python ... --tool /path/to/other/.venv/bin/inplacefix --out other.txt

The libraries come from the interpreter given (torch 2.13.0 with the versions in bench/hazard_checks24/README.md);
torch's own nn, optim and distributions count as three code bases, and of torchvision and transformers the
models (`torchvision/models`, `transformers/models`), as labelled for issue 14.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

TORCH_PARTS = ("nn", "optim", "distributions")
PACKAGES = (
    "timm", "kornia", "x_transformers", "diffusers", "transformers", "torchvision", "monai", "pyro",
    "torchmetrics", "torch_geometric", "e3nn", "vit_pytorch", "linear_operator", "botorch", "neuralforecast",
    "lightly", "asteroid", "speechbrain", "audiocraft", "allennlp", "ultralytics", "fastai", "alphafold3_pytorch",
    "audiolm_pytorch",
)
# the code bases labelled at stops 42-48 (bench/hazard_checks24/labels.tsv); read from a folder of unpacked
# wheels (`--site`, `pip download --no-deps` and unzip): the check reads source only, nothing is imported
LABELLED = (
    "spandrel", "piq", "escnn", "pytorch_lightning", "torchattacks", "advertorch", "ignite", "compressai", "deepinv",
    "braindecode", "nnAudio", "torchao", "torchcrepe",
    "pytorch_optimizer", "sbi", "torchphysics", "neuromancer", "torchopt", "bitsandbytes", "nequip", "avalanche",
    "adapters", "skrl", "mace", "effdet", "schedulefree", "geomloss", "torchsynth", "pyannote",
    # stop 46 (prec46): versions in bench/hazard_checks24/labels.tsv's stop 46 header
    "darts", "muse_maskgit_pytorch", "perceiver_pytorch", "schnetpack", "se3_transformer_pytorch", "torch_harmonics",
    "flow_matching", "gluonts", "neuralop", "recbole", "rectified_flow_pytorch", "torch_dct",
    "torch_geometric_temporal", "torchcfm", "torchkbnufft", "torchmdnet", "tsai", "voicebox_pytorch", "x_clip",
    # stop 47 (new47)
    "heavyball", "laplace", "geoopt", "pypots", "backpack", "transformer_lens", "rwkv", "torchgeo", "peft", "galore_torch", "pyiqa",
    "bayesian_torch", "fairscale", "torch_struct", "chemprop", "pytorch_grad_cam", "prodigyopt", "dadaptation",
    "soundstorm_pytorch", "st_moe_pytorch", "coca_pytorch", "torch_fidelity",
    # stop 48 (prec48): versions in bench/hazard_checks24/labels.tsv's stop 48 header
    "roma", "espnet", "DISTS_pytorch", "FrEIA", "adabelief_pytorch", "adan_pytorch", "audio_diffusion_pytorch",
    "came_pytorch", "flowtorch", "madgrad", "ptwt", "pypose", "pytorch_fid", "pytorch_kinematics", "smplx",
    "torchaudio", "torchode", "torchquad", "cleanfid", "dac", "encodec", "vocos", "video_diffusion_pytorch",
)
SUBFOLDER = {"torchvision": ("models",), "transformers": ("models",)}


def package_dirs(python: str) -> list[tuple[str, str]]:
    """(name, folder) of every code base, found by the libraries' interpreter without importing them."""
    code = (
        "import importlib.util, json, os, sys\n"
        "out = {}\n"
        "for name in sys.argv[1:]:\n"
        "    spec = importlib.util.find_spec(name)\n"
        "    out[name] = os.path.dirname(spec.origin) if spec and spec.origin else None\n"
        "print(json.dumps(out))\n"
    )
    found = json.loads(subprocess.run([python, "-c", code, "torch", *PACKAGES], check=True,
                                      capture_output=True, text=True).stdout)
    dirs = [("torch." + part, os.path.join(found["torch"], part)) for part in TORCH_PARTS]
    missing = [name for name in PACKAGES if not found.get(name)]
    if missing:
        sys.exit("not installed in %s: %s" % (python, ", ".join(missing)))
    return dirs + [(name, os.path.join(found[name], *SUBFOLDER.get(name, ()))) for name in PACKAGES]


def proven(tool: str, name: str, folder: str) -> list[str]:
    """path:line:code of every proven finding of the default `check` over one code base."""
    run = subprocess.run([tool, "check", "--no-cache", "--output-format", "json", folder], capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit("%s on %s: exit %d\n%s" % (tool, name, run.returncode, run.stderr[-2000:]))
    data = json.loads(run.stdout)
    findings = data["findings"]
    base = os.path.dirname(folder)
    while os.path.exists(os.path.join(base, "__init__.py")):  # paths from the folder holding the package
        base = os.path.dirname(base)
    rows = []
    for f in findings:
        code = f["code"]
        if not str(code).startswith("IPF1"):
            continue
        path = os.path.relpath(f["filename"], base)
        rows.append("%s:%s:%s" % (path, f["location"]["row"], code))
    return sorted(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--libs-python", help="interpreter that has torch 2.13.0 and the 28 code bases")
    where.add_argument("--site", help="folder holding the code bases labelled at stops 42-48, unpacked")
    parser.add_argument("--tool", default=shutil.which("inplacefix") or "inplacefix", help="the inplacefix to measure")
    parser.add_argument("--out", help="write the findings here too")
    args = parser.parse_args()
    lines = []
    if args.site:
        missing = [name for name in LABELLED if not os.path.isdir(os.path.join(args.site, name))]
        if missing:
            sys.exit("not in %s: %s" % (args.site, ", ".join(missing)))
        bases = [(name, os.path.join(args.site, name)) for name in LABELLED]
    else:
        bases = package_dirs(args.libs_python)
    for name, folder in bases:
        started = time.monotonic()
        rows = proven(args.tool, name, folder)
        # the seconds each code base takes: a speed cliff shows here first (heavyball, avalanche)
        print("%-22s %3d  %6.1f s" % (name, len(rows), time.monotonic() - started), file=sys.stderr)
        lines += rows
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    print("total %d proven" % len(lines), file=sys.stderr)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
