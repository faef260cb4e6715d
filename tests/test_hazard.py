"""Hazard analysis: flags the conflicting op of every broken model and nothing in working ones."""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.findings import Finding, Status

from .backward import raises_at_backward
from .test_locate import BROKEN, WORKING, marked


def hazards(path):
    result = process_source(path.read_bytes(), str(path), Settings())  # the default: hazards only
    assert result.error is None
    return result.findings


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_hazard_flags_the_conflicting_op(path):
    findings = hazards(path)
    modified = marked(path, "modified")
    assert any(f.code.startswith("IPF1") and f.span.line in modified for f in findings), findings


@pytest.mark.parametrize("path", WORKING, ids=lambda p: p.stem)
def test_working_models_have_no_hazard(path):
    assert hazards(path) == []


def test_blanket_selection_still_lists_the_harmless_candidates():
    path = next(p for p in WORKING if p.stem == "resnet_block")
    everything = process_source(path.read_bytes(), str(path), Settings(select=("ALL",))).findings
    assert {f.code for f in everything} == {"IPF001", "IPF002"}


def test_an_inplace_module_set_on_self_outside_a_class_is_a_possible_hazard_not_a_crash():
    data = (b"import torch\nfrom torch import nn\n\n\ndef build(self, x):\n"
            b"    self.act = nn.ReLU(inplace=True)\n    y = torch.sigmoid(x)\n    return self.act(y)\n")
    assert process_source(data, "build.py", Settings()).findings == []  # possible: off by default
    result = process_source(data, "build.py", Settings(select=("IPF2",)))
    assert result.error is None
    assert [(f.code, f.span.line) for f in result.findings] == [("IPF202", 6)]
    assert "cannot be followed" in result.findings[0].message


# ----------------------------------------------------------------- two tiers (issue 14)

HEADER = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


OFFSET = HEADER.count("\n")


def found(body: str, select=("IPF1",)):
    """(code, line, message) of the findings in ``body`` (a module after HEADER)."""
    data = (HEADER + textwrap.dedent(body)).encode()
    result = process_source(data, "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line - OFFSET, f.message) for f in result.findings]


def codes(body: str, select=("IPF1",)):
    return [(code, line) for code, line, _ in found(body, select)]


def test_the_registry_derives_a_possible_code_per_rule_off_by_default():
    from codemod.rules.registry import rules, table

    for rule in rules():
        possible = f"IPF2{rule.CODE[4:]}"
        assert not table()[f"IPF1{rule.CODE[4:]}"].possible
        if not rule.POSSIBLE_FORM:  # leaf and view errors: PyTorch refuses the write; no "may" form
            assert possible not in table()
            continue
        assert table()[possible].possible and table()[possible].name == f"{rule.NAME}-possible-hazard"
    assert {"IPF205", "IPF206"}.isdisjoint(table()) and {"IPF201", "IPF204"} <= set(table())
    assert not Settings().selects("IPF201") and Settings().selects("IPF101")
    assert Settings(select=("ALL",)).selects("IPF201")


def test_a_value_from_the_caller_is_a_possible_hazard_shown_on_request():
    body = """\
    def f(x: torch.Tensor):
        x += 1
        return x
    """
    assert codes(body) == []
    assert codes(body, ("IPF2",)) == [("IPF201", 2)]
    assert codes(body, ("ALL",)) == [("IPF201", 2)]
    assert "comes from the caller" in found(body, ("ALL",))[0][2]


def test_a_proven_hazard_names_the_saving_op_and_its_line():
    [(code, line, message)] = found("""\
    def f(w):
        h = torch.sigmoid(w)
        h += 1
        return h
    f(nn.Parameter(torch.randn(3)))  # a caller handing it a parameter: it requires grad
    """)
    assert (code, line) == ("IPF101", 3) and f"output of `torch.sigmoid` at line {2 + OFFSET}" in message


def test_a_call_the_analysis_cannot_see_into_is_a_possible_hazard():
    body = """\
    from elsewhere import helper  # not summarized: a module this run does not see

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            h = self.fc(x)
            y = helper(h)
            h += 1
            return y
    """
    assert codes(body) == []
    assert codes(body, ("IPF2",)) == [("IPF201", 11)]


def test_the_lsp_shows_possible_hazards_as_hints():
    from codemod.findings import Span
    from codemod.frontends.lsp import _diagnostic
    from lsprotocol import types as lsp
    from pygls.workspace.position_codec import PositionCodec

    from codemod.frontends.lsp_positions import Positions

    finding = Finding("IPF201", "m", Span(1, 0, 1, 1), Status.SAFE)
    diagnostic = _diagnostic(finding, Positions("x += 1\n", PositionCodec()))
    assert diagnostic.severity is lsp.DiagnosticSeverity.Hint and diagnostic.code == "IPF201"


# ----------------------------------------------------------------- ops that save nothing


def test_multiplying_by_a_python_number_saves_nothing_but_pow_saves():
    template = """\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.w = nn.Parameter(torch.ones(3))

        def forward(self, x):
            h = self.fc(x)
            y = h {op}
            h += 1
            return y
    """
    assert codes(template.format(op="* 2.0")) == []
    assert codes(template.format(op="/ 2")) == []
    assert codes(template.format(op="+ self.w")) == []
    assert codes(template.format(op="** 2")) == [("IPF101", 10)]
    assert codes(template.format(op="* self.w")) == [("IPF101", 10)]
    # a factor the analysis cannot type: saved only if it is a tensor that requires grad
    assert codes(template.format(op="* self.scale")) == []
    assert codes(template.format(op="* self.scale"), ("IPF2",)) == [("IPF201", 10)]


def test_pad_interpolate_and_cat_save_nothing_max_pool_saves_its_input():
    template = """\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)

        def forward(self, x):
            h = self.conv(x)
            p = {op}
            p += 1
            return p
    """
    for op in ("F.pad(h, (1, 1))", "F.interpolate(h, scale_factor=2.0)", "torch.cat([h, h])", "h.reshape(-1)"):
        assert codes(template.format(op=op), ("IPF1", "IPF2")) == [], op
    assert codes("""\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)

        def forward(self, x):
            h = self.conv(x)
            pooled = F.max_pool2d(h, 2)
            h -= h.mean()
            return pooled
    """) == [("IPF101", 9)]


def test_inplace_activation_after_a_norm_or_conv_in_a_sequential_is_no_hazard():
    for layer in ("nn.BatchNorm3d(4)", "nn.Conv3d(4, 4, 3)", "nn.InstanceNorm2d(4)", "nn.GroupNorm(2, 4)"):
        assert codes(f"net = nn.Sequential(nn.Conv3d(3, 4, 3), {layer}, nn.ReLU(inplace=True))\n",
                     ("IPF1", "IPF2")) == [], layer
    assert codes("net = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid(), nn.Dropout(0.1, inplace=True))\n") \
        == [("IPF102", 1)]


def test_an_inplace_variant_saves_its_result():
    [(code, line, message)] = found("""\
    def f(w: torch.Tensor):
        h = w * 1.0
        h.sigmoid_()
        h += 1
        return h
    f(nn.Parameter(torch.randn(3)))  # a caller handing it a parameter: it requires grad
    """)
    assert (code, line) == ("IPF101", 4) and "h.sigmoid_()" in message


def test_an_out_argument_records_no_graph():
    assert codes("""\
    def f(a, b, buf):
        logits = torch.exp(a)
        torch.amax(logits, dim=1, keepdim=True, out=buf)
        logits.sub_(buf)
        return logits
    f(nn.Parameter(torch.randn(2, 3)), None, torch.empty(2, 1))
    """) == [("IPF103", 4)]  # saved by exp (its output), not by the out= amax
    assert "torch.exp" in found("""\
    def f(a, buf):
        logits = torch.exp(a)
        logits.sub_(buf)
        return logits
    """, ("IPF1", "IPF2"))[0][2]


# ----------------------------------------------------------------- what runs after the write


def test_the_other_branch_of_a_conditional_does_not_run_before_the_write():
    body = """\
    class Act(nn.Module):
        def forward(self, x):
            gate = torch.sigmoid(x)
            return x.mul_(gate) if self.inplace else x * gate
    """
    assert codes(body) == []


def test_a_save_later_in_a_loop_counts_only_when_the_next_turn_writes_the_same_tensor():
    assert codes("""\
    def f(params, w):
        for p in params:
            buf = p.float()
            buf.add_(1)
            y = buf @ w
        return y
    """) == []
    assert codes("""\
    def f(p, w: torch.Tensor, n):
        buf = p.float()
        for _ in range(n):
            buf.add_(1)
            y = buf @ w
        return y
    """) == [("IPF103", 4)]


def test_a_module_level_name_is_no_alias_of_the_written_tensor():
    # `torch.view_as_real(p)` once made `torch` a member of p's family, "saved by torch.square"
    assert not any("`torch` was saved" in m for _, _, m in found("""\
    def f(params, grads):
        for p, g in zip(params, grads):
            p = torch.view_as_real(p)
            s = torch.square(g)
            p.add_(s)
    """, ("ALL",)))


# ----------------------------------------------------------------- not differentiable


def test_integral_and_boolean_tensors_are_never_proven_hazards():
    assert codes("""\
    def f(a, b, x):
        mask = a > 0
        y = x * mask
        mask &= b > 0
        return y
    """) == []
    assert codes("""\
    def f(logits, x):
        idx = logits.argmax(-1)
        y = idx.exp()
        idx[0] = 0
        return y
    """) == []
    assert codes("""\
    def f(x, n):
        k = torch.zeros(3, dtype=torch.long)
        y = x * k
        k += 1
        return y
    """) == []


def test_a_python_number_is_never_a_proven_hazard():
    body = """\
    def largest_factor(x, number):
        factor = min(number, 8)
        y = x / factor
        factor -= 1
        return y
    """
    assert codes(body) == []


# ----------------------------------------------------------------- nothing requires grad


def test_constants_samples_and_detached_values_save_nothing():
    for value in ("torch.linspace(0, 1, 5)", "dist.sample()", "x.detach()", "torch.eye(3)",
                  "torch.arange(5).float()"):
        assert codes(f"""\
        def f(x, dist):
            base = {value}
            s = base.sqrt()
            s -= 1
            return s
        """, ("IPF1", "IPF2")) == [], value
    assert codes("""\
    def f(x, dist):
        base = dist.rsample()
        s = base.sqrt()
        s -= 1
        return s
    """, ("IPF1", "IPF2")) == [("IPF101", 4)]  # not a constant: a sample of a distribution handed in


def test_a_constant_filled_with_a_tensor_that_requires_grad_is_no_constant():
    assert codes("""\
    def f(w):
        base = torch.zeros(3)
        base[0] = w
        s = base.exp()
        s += 1
        return s
    """, ("IPF1", "IPF2")) == [("IPF101", 5)]  # no constant: `w`, an argument, was written into it


def test_a_constant_saved_for_another_operands_gradient_is_a_hazard():
    assert codes("""\
    def f(w: torch.Tensor):
        rot = torch.eye(3)
        y = rot @ w
        rot[0, 0] = 2.0
        return y
    """) == [("IPF104", 4)]


def test_what_only_constants_reach_through_this_files_calls_is_a_possible_hazard():
    body = """\
    def rescale(betas):
        alphas_bar_sqrt = torch.cumprod(1.0 - betas, dim=0).sqrt()
        alphas_bar_sqrt -= alphas_bar_sqrt[-1].clone()
        return alphas_bar_sqrt

    class Scheduler:
        def __init__(self, n):
            self.betas = torch.linspace(1e-4, 0.02, n)
            self.betas = rescale(self.betas)
    """
    assert codes(body) == []
    assert codes(body, ("IPF2",)) == [("IPF201", 3)]


def test_grad_off_callers_and_custom_functions_stay_skipped():
    assert codes("""\
    def kernel(p, w):
        s = torch.sigmoid(p)
        s += w
        return s

    def step(params, w):
        with torch.no_grad():
            for p in params:
                kernel(p, w)
    """, ("IPF1", "IPF2")) == []


def test_an_op_whose_result_is_only_compared_is_never_backpropagated():
    body = """\
    def f(a: torch.Tensor, d: torch.Tensor):
        det = a * d
        det[torch.abs(det) < 1e-10] = 1e-10
        return det
    """
    assert codes(body) == []


def test_max_over_a_dim_saves_its_indices_only_and_math_functions_are_no_tensor_ops():
    assert codes("""\
    def f(w: torch.Tensor):
        h = w * 1.0
        m = torch.max(h, dim=-1, keepdim=True)[0]
        h.masked_fill_(h > 0, 0.0)
        return h - m
    """) == []
    assert codes("""\
    def f(shape):
        gain = math.sqrt(shape[0] / shape[1])
        gain *= 0.5
        return gain
    """, ("IPF1", "IPF2")) == []


def test_a_save_in_another_branch_of_an_if_does_not_run_before_the_write():
    assert codes("""\
    def f(a: torch.Tensor, b: torch.Tensor, l1: bool):
        diff = a - b
        if l1:
            d = diff.square()
        else:
            d = diff.abs_()
        return d
    """) == []


def test_helpers_inside_a_grad_off_function_run_with_grad_off():
    assert codes("""\
    def kernel(exp_avg_sq: torch.Tensor, eps: float):
        def adaptive_lr():
            s = exp_avg_sq.sqrt()
            s.add_(eps)
            return s
        return adaptive_lr()

    def step(states, eps):
        with torch.no_grad():
            for s in states:
                kernel(s, eps)
    """, ("IPF1", "IPF2")) == []


def test_a_backward_registered_with_register_autograd_runs_with_grad_off():
    assert codes("""\
    @torch.library.custom_op("my::op", mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    def backward(ctx, grad: torch.Tensor):
        g = torch.sigmoid(grad)
        g.mul_(2)
        return g

    op.register_autograd(backward)
    """, ("IPF1", "IPF2")) == []


def test_a_value_read_only_by_out_calls_is_never_backpropagated():
    assert codes("""\
    def normalize(x: torch.Tensor, out: torch.Tensor):
        denom = x.norm(2, 1, keepdim=True).clamp_min_(1e-12)
        return torch.div(x, denom, out=out)
    """) == []


def test_an_op_that_takes_integers_proves_nothing_about_a_tensor_of_unknown_dtype():
    body = """\
    def shift_right(input_ids, pad: int):
        tokens = input_ids.clone()
        eos = tokens.gather(1, (tokens.ne(pad).sum(1) - 1).unsqueeze(-1))
        tokens[:, 0] = pad
        return tokens, eos
    """
    assert codes(body) == []
    assert codes(body, ("IPF2",)) == [("IPF204", 4)]
    floating = body.replace("input_ids.clone()", "input_ids.float()").replace("(input_ids,", "(input_ids: torch.Tensor,")
    assert codes(floating) == [("IPF104", 4)]  # floating, and an argument: an input that may require grad
    # (gather saves its input: torch raises at backward; see test_gather_saves_its_input below)
    assert codes(floating + "shift_right(nn.Parameter(torch.ones(2, 3)), 0)\n") == [("IPF104", 4)]


def test_gather_saves_its_input():
    def run():
        x = torch.rand(2, 3, requires_grad=True)
        tokens = x * 1.0
        eos = tokens.gather(1, torch.tensor([[0], [1]]))
        tokens[:, 0] = 0.0
        eos.sum().backward()

    assert raises_at_backward(run)


def test_index_arguments_of_an_inplace_write_carry_no_grad():
    assert codes("""\
    def sample(population: torch.Tensor, force: torch.Tensor, k: int):
        rand = torch.rand(3, 5)
        newest = population[:, None] - 1
        rand.scatter_(1, newest, torch.where(force[:, None], 2.0, rand.gather(1, newest)))
        return rand.topk(k, dim=1).indices
    """, ("IPF1", "IPF2")) == []


def test_an_output_read_only_for_indices_or_comparisons_is_never_backpropagated():
    body = """\
    def select_blocks(scores: torch.Tensor, local: torch.Tensor, k: int):
        block_scores = scores.softmax(-1)
        block_scores.scatter_(-1, local, float("inf"))
        top_scores, top_indices = block_scores.topk(k, dim=-1)
        return top_indices.masked_fill(top_scores == float("-inf"), -1)
    """
    assert codes(body) == []
    caller = "select_blocks(nn.Parameter(torch.randn(2, 8)), torch.zeros(2, 1, dtype=torch.long), 2)\n"
    assert codes(body.replace("return top_indices", "return top_scores + top_indices") + caller) == [("IPF103", 3)]


def test_a_loop_turn_that_rebinds_in_every_branch_runs_no_save_before_the_write():
    body = """\
    class Net(nn.Module):
        def forward(self, x: torch.Tensor, layers, last: int):
            for i, layer in enumerate(layers):
                if i < 2:
                    x = layer(x)
                else:
                    x_prev, x = x, layer(x)
                if i == last:
                    x = torch.relu_(x)
            return x
    """
    assert codes(body) == []


def test_an_output_reaching_the_write_only_where_its_input_requires_no_grad_saved_nothing():
    body = """\
    def dual_softmax(sim: torch.Tensor, invalid: torch.Tensor):
        conf = F.softmax(sim, 2)
        if sim.requires_grad:
            conf = sim.softmax(1) * conf
        else:
            conf.mul_(2.0)
        conf.masked_fill_(invalid, 0.0)
        return conf
    """
    assert codes(body) == []
    caller = "dual_softmax(nn.Parameter(torch.randn(1, 2, 2)), torch.zeros(1, 2, 2, dtype=torch.bool))\n"
    assert codes(body.replace("conf = sim.softmax(1) * conf", "pass") + caller) == [("IPF103", 7)]


def test_the_result_of_another_inplace_write_is_still_read():
    assert codes("""\
    def f(x: torch.Tensor):
        y = torch.exp(x)
        z = y.mul_(2) + 1
        return z
    f(nn.Parameter(torch.randn(3)))  # a caller handing it a parameter: it requires grad
    """) == [("IPF103", 3)]


def test_the_lsp_shows_possible_hazards_named_by_select_even_with_candidates_hidden():
    import dataclasses

    from codemod.findings import Span
    from codemod.frontends.lsp import EditorSettings, server

    possible = Finding("IPF201", "m", Span(1, 0, 1, 1), Status.SAFE)
    plain = Finding("IPF001", "m", Span(1, 0, 1, 1), Status.SAFE)
    saved = server.editor
    try:
        server.editor = dataclasses.replace(EditorSettings(), candidates="hidden", select=("IPF1", "IPF2"))
        assert server.shown(possible) and not server.shown(plain)
        server.editor = dataclasses.replace(EditorSettings(), candidates="hidden")
        assert not server.shown(possible)
        server.editor = EditorSettings()
        assert server.shown(possible)
    finally:
        server.editor = saved


def test_a_torch_op_without_data_is_a_possible_hazard():
    body = """\
    def f(x: torch.Tensor):
        y = torch.lgamma(x)
        y += 1
        return y
    """
    assert codes(body) == []
    [(code, line, message)] = found(body, ("IPF2",))
    assert (code, line) == ("IPF201", 3) and "cannot see into" in message


def test_a_helper_handed_out_of_a_grad_off_function_is_not_grad_off():
    assert codes("""\
    def make_hook(scale: torch.Tensor):
        def hook(w: torch.Tensor):
            s = w.sigmoid()
            s.mul_(scale)
            return s
        return hook

    def build(scale):
        with torch.no_grad():
            return make_hook(scale)
    """, ("IPF1", "IPF2")) == [("IPF203", 4)]  # not grad off; `w` is a closure's argument: nothing shows more


# ----------------------------------------------------------------- recall round 2 (issue 14)

_DECODER = """\
class Decoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(4, dim))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        x += self.pos
        return self.proj(x)


"""


def test_a_write_into_a_parameter_is_proven_where_a_caller_passes_a_tensor_saved_before_the_call():
    found_here = found(_DECODER + """\
    def run(quant):
        a = Decoder(8)(quant)
        b = Decoder(8)(quant)
        return a + b
    """)
    assert [(c, line) for c, line, _ in found_here] == [("IPF101", 8)]
    message = found_here[0][2]
    assert "the caller's tensor: at line" in message and "Decoder.forward via torch.nn.Linear" in message


def test_the_callers_say_nothing_when_no_op_saved_the_argument_before_the_call():
    assert codes(_DECODER + """\
    def run(enc, latent):
        a = Decoder(8)(enc(latent))
        quant = enc(latent)
        b = Decoder(8)(quant)
        with torch.no_grad():
            c = Decoder(8)(quant)
        return a + b + c
    """) == []


def test_the_callers_of_a_recursive_function_end():
    assert codes("""\
    def walk(x, n):
        x += 1
        if n:
            walk(x, n - 1)
        return x
    """) == []


def test_a_forward_parameter_handed_to_a_user_module_that_saves_it_is_a_tensor():
    """`x += ...` on a forward parameter that a user LayerNorm saved is proven (the summary
    proves x a tensor); rebound to a projection first, it is no hazard."""
    module = """\
class LN(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return F.layer_norm(x, self.w.shape, self.w)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = LN(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
"""
    assert codes(module + "        x += self.fc(self.ln(x))\n        return x\n") == [("IPF101", 17)]
    rebound = "        h = self.ln(x)\n        x = self.fc(x)\n        x += h\n        return x\n"
    assert codes(module + rebound) == []


def test_an_unpacked_output_that_the_op_saves_is_proven_one_it_does_not_save_is_not():
    eigh = """\
    def f(a):
        evals, evecs = torch.linalg.eigh(a @ a.mT)
        evals.clamp_min_(1e-6)
        return evals, evecs
    f(nn.Parameter(torch.randn(3, 3)))
    """
    found_here = found(eigh)
    assert [(c, line) for c, line, _ in found_here] == [("IPF103", 3)]
    assert f"output 0 of `torch.linalg.eigh` at line {2 + OFFSET}" in found_here[0][2]
    assert codes(eigh.replace("evals.clamp_min_", "evecs.clamp_min_").replace("(1e-6)", "(0.0)")) == [("IPF103", 3)]
    assert codes(eigh.replace("torch.linalg.eigh", "torch.sort")) == []  # sort keeps the indices only
    assert codes(eigh.replace("a @ a.mT", "torch.eye(3)")) == []  # nothing requires grad


def test_outputs_saved_are_measured_for_tuple_returning_ops():
    from codemod import torch_api

    assert torch_api.OUTPUTS_SAVED["torch.linalg.eigh"] == (0, 1)
    assert torch_api.OUTPUTS_SAVED["torch.sort"] == ()


def test_a_conditional_expression_is_an_alias_through_the_branch_that_views_the_tensor():
    """`inp = x if first else h[0]`: on the path through `else`, `inp` is a view of `h`, which
    `sin` saved; writing a row of `h` bumps the version they share."""
    body = """\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x, first: bool):
            h = self.fc(x)
            inp = x if first else h[0]
            y = inp.sin()
            h[1] = 0.0
            return y + h.sum()
    """
    assert codes(body) == [("IPF104", 10)]
    assert codes(body.replace("x if first else h[0]", "x if first else x[0]")) == []


def test_an_in_place_layer_appended_first_to_a_sequential_writes_into_what_its_callers_pass():
    body = """\
    class MLP(nn.Module):
        def __init__(self, sizes, inplace=True):
            super().__init__()
            layers = []
            for a, b in zip(sizes[:-1], sizes[1:]):
                layers.append(nn.ReLU(inplace=inplace))
                layers.append(nn.Linear(a, b))
            self.net = nn.Sequential(*layers)

        def forward(self, x):
            return self.net(x)


    def run(data):
        trunk = nn.Linear(6, 8)
        emb = trunk(data)
        similarity = emb @ emb.T
        return similarity.sum() + MLP([8, 3])(emb).sum()
    """
    assert codes(body) == [("IPF102", 6)]
    first_linear = body.replace("layers = []\n", "layers = [nn.Linear(8, 8)]\n")
    assert codes(first_linear) == []  # the ReLU follows a Linear (saves no output)
    fresh = body.replace("MLP([8, 3])(emb)", "MLP([8, 3])(trunk(data))")
    assert codes(fresh) == []
    no_grad = body.replace("        return similarity.sum() + MLP", "        with torch.no_grad():\n            out = MLP").replace(
        "(emb).sum()\n", "(emb).sum()\n        return similarity.sum() + out\n")
    assert codes(no_grad) == []


def test_random_fills_keep_the_receivers_requires_grad_as_torch_says():
    import torch

    from codemod.analysis.requires_grad import RANDOM_FILLS

    for method in sorted(RANDOM_FILLS):
        args = (0.5,) if method == "geometric_" else ()
        out = getattr(torch.empty(3).new_empty(3), method)(*args, generator=torch.Generator())
        assert not out.requires_grad, method
    p = torch.full((3,), 0.5, requires_grad=True)
    assert torch.empty(3).bernoulli_(p).requires_grad  # why bernoulli_ is not one of them


def test_an_orthogonal_init_on_a_fresh_random_matrix_saves_nothing():
    """torch.nn.init.orthogonal_: `q, r = torch.linalg.qr(flattened)` of a `new_empty(...).normal_()`
    matrix requires no grad, so `q *= ph` breaks nothing."""
    assert codes("""\
    def orthogonal_(tensor, gain=1, generator=None):
        rows = tensor.size(0)
        cols = tensor.numel() // rows
        flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        q, r = torch.linalg.qr(flattened)
        d = torch.diag(r, 0)
        q *= d.sign()
        with torch.no_grad():
            tensor.view_as(q).copy_(q)
        return tensor
    """) == []


CONTRACT = """
import torch
import torch.nn as nn


class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.rate = nn.Parameter(torch.full((4,), 0.9))

    def step(self, state, update):
        decayed = state * self.rate
        state.mul_(0.0)
        return decayed + update


def example():
    cache = Cache()
    state = torch.randn(2, 4)
    cache.step(state, torch.randn(2, 4)).sum().backward()
"""


def test_a_mutation_contract_that_breaks_backward_is_still_a_proven_hazard(tmp_path):
    """``step`` returns something else than the state it mutates (a mutation contract: never
    rewritten), yet ``*`` saved the state for the parameter's gradient: torch raises, and the
    default report shows it, with no fix."""
    path = tmp_path / "cache.py"
    path.write_text(CONTRACT)
    scope: dict = {}
    exec(compile(CONTRACT, str(path), "exec"), scope)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        scope["example"]()
    [finding] = process_source(CONTRACT.encode(), str(path), Settings()).findings
    assert (finding.code, finding.status, finding.reason) == ("IPF103", Status.MANUAL, "mutation-as-output")
    assert "for the gradient of `self.rate`" in finding.message


def test_a_mutation_contract_with_only_a_possible_hazard_stays_skipped():
    source = "import torch\n\n\ndef f(x, w):\n    y = x * w\n    x.add_(1)\n    return y\n"
    findings = process_source(source.encode(), "f.py", Settings(select=("ALL",))).findings
    assert [(f.code, f.status) for f in findings] == [("IPF003", Status.SKIPPED)]
