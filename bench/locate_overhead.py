"""The locator's overhead: forward+backward plain, under anomaly mode, and under the locator.

Reports the median of several runs (after warm-up) and ratios to the plain run, all measured
in the same process. Usage: ``python bench/locate_overhead.py [--repeat 20]``.
"""

from __future__ import annotations

import pathlib
import statistics
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from codemod.runtime.locate import Locator  # noqa: E402


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(256, 512), nn.ReLU(inplace=True), nn.Linear(512, 512),
                                 nn.ReLU(inplace=True), nn.Linear(512, 10))

    def forward(self, x):
        return self.net(x)


class ResidualCNN(nn.Module):
    def __init__(self, c=32, blocks=4):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True),
                          nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))
            for _ in range(blocks)
        )
        self.relu = nn.ReLU(inplace=True)
        self.head = nn.Linear(c, 10)

    def forward(self, x):
        out = self.relu(self.stem(x))
        for block in self.blocks:
            identity = out
            out = block(out)
            out += identity
            out = self.relu(out)
        return self.head(out.mean((2, 3)))


class SmallTransformer(nn.Module):
    def __init__(self, dim=128, layers=2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, 4, 4 * dim, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


CASES = {
    "MLP (3 layers, batch 64)": (MLP, lambda: torch.randn(64, 256)),
    "residual CNN (4 blocks, 8x3x32x32)": (ResidualCNN, lambda: torch.randn(8, 3, 32, 32)),
    "transformer (2 layers, 8x32x128)": (SmallTransformer, lambda: torch.randn(8, 32, 128)),
}


def step(model, x):
    model(x).sum().backward()


def timed(model, x, context, repeat):
    for _ in range(3):
        with context():
            step(model, x)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        with context():
            step(model, x)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 20
    torch.manual_seed(0)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    print(f"torch {torch.__version__}, CPU, 1 thread, median of {repeat} runs")
    print(f"{'model':36} {'plain ms':>9} {'anomaly':>9} {'locator':>9} {'anomaly/plain':>14} {'locator/plain':>14} {'locator/anomaly':>16}")
    for name, (cls, make) in CASES.items():
        model, x = cls(), make()
        plain = timed(model, x, lambda: _Null(), repeat)
        anomaly = timed(model, x, lambda: torch.autograd.detect_anomaly(check_nan=False), repeat)
        located = timed(model, x, Locator, repeat)
        print(f"{name:36} {plain * 1e3:9.2f} {anomaly * 1e3:9.2f} {located * 1e3:9.2f} "
              f"{anomaly / plain:14.2f} {located / plain:14.2f} {located / anomaly:16.2f}")


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
