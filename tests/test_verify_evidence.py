""""Verified." names its evidence, and the harness runs what python runs (issue 23, groups 4 and 6).

The programs are written from public reports (not copies of ``../shared/corpus``):

- a one-step training function in the shape of pytorch/examples' MNIST ``train()`` (zero_grad,
  forward, loss, backward, ``optimizer.step()``), whose model has a sigmoid gate scaled in place;
- the straight-through quantiser of VQ-VAE implementations (``z + (q - z).detach()``, as in
  rosinality/vq-vae-2-pytorch), and the gradient-reversal ``Function`` of DANN implementations;
- a CLIP-style classification head (``logits *= self.logit_scale.exp()`` after a sigmoid);
- a two-layer GCN in the style of tkipf/pygcn (``torch.spmm(adj, support)`` with a sparse
  adjacency), and a sparse output.

Each wrong rewrite keeps every output of the program and changes only what the outputs cannot
show: the parameters after the step, a gradient, the inputs' gradients. Every run is real:
real torch, each version in a fresh process.
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402

TRAIN_STEP = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.gate = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        g = torch.sigmoid(self.gate(x))
        g *= h
        return F.log_softmax(self.fc2(g), dim=1)


def train_step():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    data, target = torch.randn(8, 12), torch.randint(0, 4, (8,))
    optimizer.zero_grad()
    output = model(data)
    loss = F.nll_loss(output, target)
    loss.backward()
    optimizer.step()
    return loss.detach()
"""

STRAIGHT_THROUGH = """
import torch
import torch.nn as nn


def quantize(z, codebook):
    idx = torch.cdist(z, codebook).argmin(dim=1)
    q = codebook[idx]
    return z + (q - z).detach()


def vq_step():
    torch.manual_seed(0)
    encoder = nn.Linear(6, 3)
    codebook = torch.randn(8, 3, requires_grad=True)
    x = torch.randn(5, 6)
    z = torch.tanh(encoder(x))
    z *= 2.0
    q = quantize(z, codebook)
    loss = (q - 0.5).pow(2).mean() + 0.25 * (z - q.detach()).pow(2).mean()
    loss.backward()
    return loss.detach()
"""

SCALE_GRAD = """
class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * 50


"""

CLIP_HEAD = """
import torch
import torch.nn as nn


class ClassHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(10, 5)
        self.logit_scale = nn.Parameter(torch.tensor(0.5))

    def forward(self, image_embeds):
        logits = torch.sigmoid(self.proj(image_embeds))
        logits *= self.logit_scale.exp()
        return logits


def example_inputs():
    return torch.randn(3, 10)
"""

GCN = """
import torch
import torch.nn as nn


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) * 0.3)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.sigmoid(torch.spmm(adj, support))
        output += self.bias
        return output


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.gc1 = GraphConvolution(6, 8)
        self.gc2 = GraphConvolution(8, 3)
        edges = torch.tensor([[0, 1, 1, 2, 3, 4, 4, 0], [1, 0, 2, 1, 4, 3, 0, 4]])
        self.adj = torch.sparse_coo_tensor(edges, torch.full((8,), 0.5), (5, 5)).coalesce()

    def forward(self, x):
        x = self.gc1(x, self.adj)
        return torch.log_softmax(self.gc2(x, self.adj), dim=1)


def example_inputs():
    return torch.randn(5, 6)
"""

SPARSE_OUTPUT = """
import torch


def scores():
    torch.manual_seed(0)
    edges = torch.tensor([[0, 1, 2, 2], [1, 2, 0, 1]])
    weight = torch.randn(4, requires_grad=True)
    h = torch.sigmoid(weight)
    h += 1.0
    return torch.sparse_coo_tensor(edges, h, (3, 3))
"""


def judge(tmp_path, source: str, target: str, rewrite):
    model = tmp_path / "model.py"
    model.write_text(textwrap.dedent(source))
    rewritten = rewrite(model.read_text())
    assert rewritten != model.read_text()
    return verify(f"{model}::{target}", rewritten_source=rewritten, devices=["cpu"])


def fix_gate(text: str) -> str:
    return text.replace("        g *= h\n", "        g = g * h\n")


def test_a_rewrite_that_drops_the_optimizer_step_is_not_verified(tmp_path):
    result = judge(tmp_path, TRAIN_STEP, "train_step",
                   lambda t: fix_gate(t).replace("    optimizer.step()\n", ""))
    assert result.verdict is Verdict.NOT_VERIFIED, render_table(result)
    assert any("final state" in str(d) and "leaf[" in str(d) for d in result.devices[0].differences), render_table(result)


def test_the_same_fix_with_the_step_kept_is_verified_with_the_parameters_as_evidence(tmp_path):
    result = judge(tmp_path, TRAIN_STEP, "train_step", fix_gate)
    assert result.verdict is Verdict.VERIFIED, render_table(result)
    compared = result.devices[0].compared
    assert compared.changed >= 6 and compared.grads >= 6, compared  # the parameters after the step


@pytest.mark.parametrize("scaled", [
    "    z = z * 2.0\n    z = z + (49 * z - 49 * z.detach())\n",
    "    z = ScaleGrad.apply(z * 2.0)\n",
], ids=["detach-trick", "custom-function"])
def test_a_rewrite_that_scales_a_gradient_by_50_is_not_verified(tmp_path, scaled):
    source = STRAIGHT_THROUGH.replace("\n\ndef quantize", "\n\n" + SCALE_GRAD + "def quantize")
    result = judge(tmp_path, source, "vq_step", lambda t: t.replace("    z *= 2.0\n", scaled))
    assert result.verdict is Verdict.NOT_VERIFIED, render_table(result)
    assert any(".grad" in str(d) for d in result.devices[0].differences), render_table(result)


def test_the_straight_through_fix_is_verified(tmp_path):
    result = judge(tmp_path, STRAIGHT_THROUGH, "vq_step", lambda t: t.replace("    z *= 2.0\n", "    z = z * 2.0\n"))
    assert result.devices[0].reference == "oracle"
    assert result.verdict is Verdict.VERIFIED, render_table(result)


def test_a_module_rewritten_to_detach_its_input_is_not_verified(tmp_path):
    result = judge(tmp_path, CLIP_HEAD, "ClassHead", lambda t: t.replace(
        "        logits = torch.sigmoid(self.proj(image_embeds))\n        logits *= self.logit_scale.exp()\n",
        "        logits = torch.sigmoid(self.proj(image_embeds.detach()))\n"
        "        logits = logits * self.logit_scale.exp()\n"))
    assert result.verdict is Verdict.NOT_VERIFIED, render_table(result)
    assert any("inputs that require grad" in str(d) and "input:0" in str(d)
               for d in result.devices[0].differences), render_table(result)


def test_a_module_is_verified_with_inputs_that_require_grad_too(tmp_path):
    result = judge(tmp_path, CLIP_HEAD, "ClassHead", lambda t: t.replace(
        "        logits *= self.logit_scale.exp()\n", "        logits = logits * self.logit_scale.exp()\n"))
    assert result.verdict is Verdict.VERIFIED, render_table(result)
    assert "train call with inputs that require grad" in result.devices[0].compared.calls


def test_nothing_a_rewrite_could_change_is_unproven_and_says_why(tmp_path):
    source = """
    import torch


    def fn():
        w = torch.ones(3)
        w += 1
        return w * 2
    """
    result = judge(tmp_path, source, "fn", lambda t: t.replace("w += 1", "w = w + 1"))
    assert result.verdict is Verdict.UNPROVEN, render_table(result)
    assert "nothing comparable that a rewrite could change" in " ".join(result.devices[0].reasons)


def test_a_gcn_with_a_sparse_adjacency_runs_under_the_harness(tmp_path):
    result = judge(tmp_path, GCN, "GCN", lambda t: t.replace("        output += self.bias\n",
                                                             "        output = output + self.bias\n"))
    d = result.devices[0]
    assert d.original.error_kind == "saved", d.original.error  # not "Cannot access data pointer"
    assert result.verdict is Verdict.VERIFIED, render_table(result)
    assert d.rewritten.cost.saved_bytes, "the sparse adjacency saved for backward is counted"


def test_a_sparse_output_is_differentiated_by_its_values(tmp_path):
    result = judge(tmp_path, SPARSE_OUTPUT, "scores", lambda t: t.replace("    h += 1.0\n", "    h = h + 1.0\n"))
    assert result.verdict is Verdict.VERIFIED, render_table(result)
    assert result.devices[0].compared.grads >= 2
    wrong = judge(tmp_path, SPARSE_OUTPUT, "scores", lambda t: t.replace("    h += 1.0\n", "    h = h * 1.0 + 1.0 + 0 * h.detach()\n    h = h + (h - h.detach())\n"))
    assert wrong.verdict is Verdict.NOT_VERIFIED, render_table(wrong)


# ---------------------------------------------------------------- the leaf family's two meanings (group 5)
# A saliency map in the style of the vanilla-gradient examples (pytorch forum threads on
# "leaf variable has been moved into the graph interior"): the image is a leaf created with
# requires_grad=True, an activation runs in place on it, and the program reads image.grad.
SALIENCY = """
import torch
import torch.nn.functional as F


def saliency():
    torch.manual_seed(0)
    image = torch.randn(2, 3, 5, 5, requires_grad=True)
    weight = torch.randn(4, 3, 3, 3)
    h = F.leaky_relu(image, 0.2, inplace=True)
    score = F.conv2d(h, weight).amax(dim=(1, 2, 3)).sum()
    score.backward()
    return {"saliency": image.grad.abs().amax(dim=1)}
"""

# FreeLB-style adversarial training keeps the word embeddings as a leaf (``.detach().requires_grad_()``);
# a "dummy" image feature is added times zero so that the vision tower's parameters get a
# gradient on text-only batches (the DDP unused-parameter workaround).
DUMMY = """
import torch
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 6)
        self.vision = nn.Linear(8, 6)
        self.head = nn.Linear(6, 2)

    def step(self, ids, dummy_image):
        embeds = self.embed(ids).detach().requires_grad_()
        embeds += self.vision(dummy_image).mean() * 0.
        loss = self.head(torch.tanh(embeds)).logsumexp(-1).mean()
        loss.backward()
        return loss.detach(), embeds.grad


def train_step():
    torch.manual_seed(0)
    tower = Tower()
    loss, delta = tower.step(torch.randint(0, 11, (3, 4)), torch.randn(1, 8))
    return {"loss": loss, "delta": delta, "vision": tower.vision.weight.grad}
"""


def test_an_activation_in_place_on_an_input_whose_grad_is_read_means_the_copy(tmp_path):
    wrapped = judge(tmp_path, SALIENCY, "saliency", lambda t: t.replace(
        "    h = F.leaky_relu(image, 0.2, inplace=True)\n",
        "    with torch.no_grad():\n        h = F.leaky_relu(image, 0.2, inplace=True)\n"))
    d = wrapped.devices[0]
    assert d.reference == "copy meaning", render_table(wrapped)
    assert "no-grad meaning does not fit" in d.meaning and ".grad the program reads" in d.meaning, d.meaning
    assert wrapped.verdict is Verdict.NOT_VERIFIED, render_table(wrapped)
    right = judge(tmp_path, SALIENCY, "saliency", lambda t: t.replace("inplace=True", "inplace=False"))
    assert right.verdict is Verdict.VERIFIED, render_table(right)


def test_a_dummy_update_whose_right_hand_side_requires_grad_means_the_copy(tmp_path):
    source = DUMMY.replace("return loss.detach(), embeds.grad", "return loss.detach(), None")
    wrapped = judge(tmp_path, source, "train_step", lambda t: t.replace(
        "        embeds += self.vision(dummy_image).mean() * 0.\n",
        "        with torch.no_grad():\n            embeds += self.vision(dummy_image).mean() * 0.\n"))
    assert wrapped.devices[0].reference == "copy meaning", render_table(wrapped)
    assert "right-hand side requires grad" in wrapped.devices[0].meaning, wrapped.devices[0].meaning
    assert wrapped.verdict is Verdict.NOT_VERIFIED, render_table(wrapped)  # the vision tower's gradient is gone
    right = judge(tmp_path, source, "train_step", lambda t: t.replace(
        "        embeds += self.vision(dummy_image).mean() * 0.\n",
        "        embeds = embeds + self.vision(dummy_image).mean() * 0.\n"))
    assert right.devices[0].reference == "copy meaning" and right.verdict is Verdict.VERIFIED, render_table(right)


def test_a_read_of_the_updated_tensors_grad_fits_neither_meaning(tmp_path):
    """embeds.grad after ``embeds += <requires grad>``: in place, the leaf's gradient (no-grad
    meaning, but the vision tower's gradient is the point); on a copy, a non-leaf's (None).
    Neither is the program's: nothing is verified."""
    result = judge(tmp_path, DUMMY, "train_step", lambda t: t.replace(
        "        embeds += self.vision(dummy_image).mean() * 0.\n",
        "        embeds = embeds + self.vision(dummy_image).mean() * 0.\n"))
    assert result.verdict is Verdict.UNPROVEN, render_table(result)
    assert any("copy meaning does not fit" in r and ".grad" in r for r in result.devices[0].reasons), render_table(result)


def test_repair_writes_the_copy_meaning_where_the_program_differentiates_through_the_update(tmp_path):
    from codemod.runtime.repair import render, repair

    model = tmp_path / "model.py"
    model.write_text(textwrap.dedent(SALIENCY))
    result = repair(f"{model}::saliency", devices=["cpu"])
    assert result.verified, render(result)
    assert "inplace=True" not in result.repaired and "no_grad" not in result.repaired, result.repaired


# ---------------------------------------------------------------- the harness's own backward (group 4)
# Actor-critic code on the forums keeps the graph (``retain_graph=True``) and steps the optimizer
# right after: python never differentiates that graph again, the harness's own backward did,
# and failed on the stepped parameters ("modified by an inplace operation") for every rewrite.
RETAINED = """
import torch
import torch.nn as nn


def update():
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.Adam(critic.parameters(), lr=0.01)
    states = torch.randn(6, 4)
    value = torch.sigmoid(critic(states))
    value *= 2.0
    loss = (value - 1.0).pow(2).mean()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
    return loss
"""


def test_a_graph_the_program_kept_and_stepped_past_does_not_fail_the_harness(tmp_path):
    result = judge(tmp_path, RETAINED, "update", lambda t: t.replace("    value *= 2.0\n", "    value = value * 2.0\n"))
    d = result.devices[0]
    assert d.rewritten.ok, d.rewritten.error
    assert result.verdict is Verdict.VERIFIED, render_table(result)
    assert d.compared.changed >= 4  # the critic's parameters after the Adam step
    wrong = judge(tmp_path, RETAINED, "update", lambda t: t.replace(
        "    value *= 2.0\n", "    value = value * 2.0\n    value.register_hook(lambda g: g * 50)\n"))
    assert wrong.verdict is Verdict.NOT_VERIFIED, render_table(wrong)
