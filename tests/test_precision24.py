"""Issue 24 (precision half): proven hazards and unsafe fixes that were wrong on new code bases.

Each case is a small shape taken from public library code; each failed on the code before its fix.
"""

from __future__ import annotations

import textwrap

import torch
import torch.nn as nn

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
OFFSET = HEADER.count("\n")


def found(body: str, select=("IPF1",)):
    data = (HEADER + textwrap.dedent(body)).encode()
    result = process_source(data, "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line - OFFSET, f.message) for f in result.findings]


def codes(body: str, select=("IPF1",)):
    return [(code, line) for code, line, _ in found(body, select)]


# ----------------------------------------------------------------- pow and friends (group 1)

POW = """\
class M(nn.Module):
    def __init__(self, p=2.0):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.p = p

    def forward(self, x, e: torch.Tensor):
        h = self.fc(x)
        y = {expr}
        y += 1
        return y
"""


def test_pow_by_a_python_number_saves_its_input_not_its_result():
    for expr in ("h.pow(2)", "torch.pow(h, 2)", "h ** 2", "h.pow(self.p)", "torch.pow(h, exponent=2.0)"):
        assert codes(POW.format(expr=expr)) == [], expr
    # a tensor exponent (or a number raised to a tensor) saves the result: a real conflict
    assert codes(POW.format(expr="h.pow(e)")) == [("IPF101", 10)]
    assert codes(POW.format(expr="torch.pow(2, h)")) == [("IPF101", 10)]
    assert codes(POW.format(expr="2 ** h")) == [("IPF101", 10)]
    # an exponent the analysis cannot type: the result is saved only if it is a tensor
    assert codes(POW.format(expr="h.pow(self.q)")) == []
    assert codes(POW.format(expr="h.pow(self.q)"), ("IPF2",)) == [("IPF201", 10)]


def test_the_pow_facts_agree_with_torch():
    def write_after(fn):
        def run():
            x = (torch.rand(3) + 0.5).requires_grad_()
            y = fn(x)
            y += 1
            y.sum().backward()
        return run

    b = torch.rand(3) + 0.5
    assert not raises_at_backward(write_after(lambda x: x.pow(2)))
    assert not raises_at_backward(write_after(lambda x: torch.pow(x, 2.5)))
    assert raises_at_backward(write_after(lambda x: x.pow(b)))
    assert raises_at_backward(write_after(lambda x: torch.pow(2, x)))
    # grad_fn's saved attributes say the same: no `_saved_result` for a number exponent
    x = torch.rand(3, requires_grad=True)
    assert not hasattr(x.pow(2).grad_fn, "_saved_result")
    assert hasattr(x.pow(b).grad_fn, "_saved_result")
    # and the table the analysis reads says the same of each form
    from codemod.torch_api import OP_SAVES_MEASURED as measured

    assert "output" not in measured["pow_scalar"] and not hasattr((x ** 2).grad_fn, "_saved_result")
    assert "output" in measured["rpow_scalar"] and hasattr((2 ** x).grad_fn, "_saved_result")
    assert "output" in measured["pow"] and hasattr((x ** b).grad_fn, "_saved_result")


def test_a_one_operand_einsum_saves_nothing():
    body = """\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x, w: torch.Tensor):
            h = self.fc(x)
            d = torch.einsum({args})
            h += 1
            return d
    """
    assert codes(body.format(args="'ijj->i', h")) == []
    assert codes(body.format(args="'ij,jk->ik', h, w")) == [("IPF101", 9)]

    z = torch.rand(3, 3, requires_grad=True)
    h = z * 2
    d = torch.einsum("ii->i", h)
    h += 1
    d.sum().backward()  # torch agrees: nothing saved


def test_a_write_through_data_is_invisible_to_autograd():
    body = """\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Parameter(torch.randn(3, 3))

        def forward(self, x):
            dist = x @ self.embed
            e = self.embed.data
            e.mul_(0.9)
            h = torch.sigmoid(x)
            y = x * h.data
            h.data.clamp_(0, 1)
            return dist, y
    """
    assert codes(body) == []

    z = torch.rand(3, requires_grad=True)
    x = z * 2
    y = z * x  # saves x
    e = x.data
    e.add_(1)  # a different version counter
    y.sum().backward()


# ----------------------------------------------------------------- a helper's returns, all of them (group 2)


def test_a_helper_saves_its_result_only_when_every_return_does():
    # e3nn's NormActivation: `Norm(squared=True)` hands back the product unsquared-rooted; only
    # the other branch returns `out.relu().sqrt()`, whose result autograd saves
    body = """\
    from e3nn.o3 import FullyConnectedTensorProduct  # another file: a call the analysis cannot see into


    class Norm(nn.Module):
        def __init__(self, squared):
            super().__init__()
            self.tp = FullyConnectedTensorProduct("1x1o", "1x1o", "1x0e")
            self.squared = squared

        def forward(self, features):
            out = self.tp(features, features)
            if self.squared:
                return {other}
            return out.relu().sqrt()


    class NormActivation(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = Norm(squared=True)

        def forward(self, features):
            norms = self.norm(features)
            norms[norms < 1e-8] = 1e-8
            return norms.sqrt()
    """
    assert codes(body.format(other="out")) == []
    # (the tensor product is another file's class, so nothing shows it has parameters; but the
    # features are what the forward was handed: an activation that may require grad)
    assert codes(body.format(other="out.sigmoid()")) == [("IPF104", 24)]
    layer = body.replace('FullyConnectedTensorProduct("1x1o", "1x1o", "1x0e")', "nn.Bilinear(3, 3, 1)")
    assert codes(layer.format(other="out.sigmoid()")) == [("IPF104", 24)]
    # monai's GeneralizedDiceLoss.w_func: `reciprocal` for two weight types, `ones_like` (seen, saves
    # nothing) for the third: the default type raises at backward, so the write stays proven
    weights = """\
    class Loss(nn.Module):
        def w_func(self, grnd):
            if self.w_type == "simple":
                return torch.reciprocal(grnd)
            if self.w_type == "square":
                return torch.reciprocal(grnd * grnd)
            return torch.ones_like(grnd)

        def forward(self, x: torch.Tensor, target: torch.Tensor):
            w = self.w_func(target.sum(0))
            w[torch.isinf(w)] = 0.0
            return (x * w).sum()
    """
    assert codes(weights) == [("IPF104", 11)]  # the target is the loss's input (monai: real, raises)


def test_an_inplace_pow_by_a_number_leaves_its_result_free_to_write():
    # torch_geometric's gcn_norm: `deg_inv_sqrt = deg.pow_(-0.5)`, then the infinities masked
    body = """\
    def gcn_norm(edge_weight: torch.Tensor, col: torch.Tensor, n: int, e: torch.Tensor):
        deg = torch.zeros(n).scatter_add(0, col, edge_weight)
        deg_inv_sqrt = deg.pow_({exponent})
        deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0.)
        return deg_inv_sqrt[col] * edge_weight
    """
    assert codes(body.format(exponent="-0.5")) == []
    assert codes(body.format(exponent="e")) == [("IPF103", 4)]

    def run(exponent):
        def go():
            w = torch.rand(4, requires_grad=True)
            deg = torch.zeros(3).scatter_add(0, torch.tensor([0, 1, 1, 2]), w)
            out = deg.pow_(exponent)
            out.masked_fill_(out == float("inf"), 0.0)
            out.sum().backward()
        return go

    assert not raises_at_backward(run(-0.5))
    assert raises_at_backward(run(torch.full((3,), -0.5)))


# ----------------------------------------------------------------- leaf writes in helpers (group 3)


def test_a_helper_that_writes_through_data_is_no_leaf_update():
    # torch_geometric's Linear.reset_parameters: `reset_bias_(self.bias, ...)` whose initializers
    # write `value.data.uniform_(...)`: autograd never sees the write
    body = """\
    def uniform(size, value):
        value.data.uniform_(-1.0 / size, 1.0 / size)


    def reset_bias_(bias, in_channels):
        {body}
        return bias


    class Linear(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.n = n
            self.bias = nn.Parameter(torch.empty(n))
            self.reset_parameters()

        def reset_parameters(self):
            reset_bias_(self.bias, self.n)
    """
    assert codes(body.format(body="uniform(in_channels, bias)")) == []
    assert codes(body.format(body="bias.data.zero_()")) == []
    assert codes(body.format(body="bias.uniform_(-1.0, 1.0)")) == [("IPF105", 18)]

    bias = nn.Parameter(torch.empty(3))
    bias.data.uniform_(-1.0, 1.0)  # torch agrees: no leaf error through .data
    try:
        bias.uniform_(-1.0, 1.0)
        raise AssertionError("a direct write into a parameter with grad on is refused")
    except RuntimeError as error:
        assert "leaf Variable" in str(error)


# ----------------------------------------------------------------- a write below a reported one (group 5)


def test_a_write_after_rebinding_to_an_inplace_result_still_writes_the_saved_tensor():
    body = """\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            probs = torch.sigmoid(self.fc(x))
            probs = probs.clamp_(min=1e-6)
            probs[:, 0] = 0
            return probs
    """
    assert codes(body) == [("IPF103", 8), ("IPF104", 9)]

    # torch: the in-place call hands back its receiver, and the write bumps the saved tensor's version
    probs = torch.sigmoid(torch.randn(2, 3, requires_grad=True))
    same = probs.clamp_(min=1e-6)
    before = same._version
    same[:, 0] = 0
    assert same is probs and probs._version == before + 1


# ----------------------------------------------------------------- integers are never tensor fixes (group 2)


def fixed(body: str, unsafe=True) -> str:
    from codemod.engine.pipeline import process_source as run

    data = (HEADER + textwrap.dedent(body)).encode()
    result = run(data, "case.py", Settings(select=("ALL",), unsafe_fixes=unsafe), fix=True)
    assert result.error is None, result.error
    return (result.fixed if result.fixed is not None else data.decode())[len(HEADER):]


def test_an_alias_fix_never_rebinds_an_integer():
    # an FFT convolution's lengths: `pad *= 2` on an int leaves `fft_len` alone; rebinding both
    # (`pad = fft_len = pad * 2`) cut the output to the wrong length
    body = """\
    def fft_conv(u, k, n):
        fft_len = n
        pad = fft_len
        pad *= 2
        u_f = torch.fft.rfft(u, n=pad)
        k_f = torch.fft.rfft(k, n=pad)
        return torch.fft.irfft(u_f * k_f, n=pad)[..., :fft_len]
    """
    assert "fft_len = pad" not in fixed(body)
    assert codes(body, ("ALL",)) == []


def test_containers_are_never_cloned():
    """A guard (this passed before issue 24's changes): the containers the issue names."""
    body = """\
    def load(model, path, rename):
        sd = torch.load(path)
        for old, new in rename:
            sd[new] = sd.pop(old)
        own = model.state_dict()
        for key in list(own):
            own[key] = sd[key]
        return own


    def register(blocks, name, width):
        blocks[name] = nn.Linear(width, width)
        return [m for _, m in blocks.items()]


    def gather(outs, i, value):
        outs[i] = value
        outs.append(value)
        return outs


    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"a": nn.Linear(3, 3)})
            self.scales = nn.ParameterDict({"a": nn.Parameter(torch.ones(3))})

        def forward(self, x, name):
            heads = self.heads
            heads[name] = nn.Identity()
            scales = self.scales
            scales[name] = nn.Parameter(torch.zeros(3))
            return heads[name](x) * scales[name]
    """
    out = fixed(body)
    assert ".clone()" not in out, out


def test_a_list_handed_to_torch_cat_is_no_tensor():
    body = """\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, feats, state, i):
            out = torch.cat(feats, 1)
            feats[i] = self.fc(out)
            torch.save(state, "x.pt")
            state[i] = out
            return feats
    """
    assert ".clone()" not in fixed(body)
    # a tensor handed to a torch op still is one
    assert ".clone()" in fixed(body.replace("torch.cat(feats, 1)", "torch.sigmoid(feats)").replace(
        "feats[i] = self.fc(out)", "x = feats\n            x[i] = self.fc(out)"))


# ----------------------------------------------------------------- mutation contracts (group 4)


def test_an_object_a_loop_takes_from_a_holder_is_never_rebound():
    # torch_geometric's NormalizeFeatures: `store[key] = value` updates the graph handed in;
    # `store = store.clone()` before it left the graph unchanged
    transform = """\
    class NormalizeFeatures:
        def forward(self, data, keys):
            for store in data.stores:
                for key in keys:
                    value = store[key]
                    value = value - value.min()
                    store[key] = value
            return data
    """
    assert "store = store.clone()" not in fixed(transform)
    # a buffer reset in a loop over the module's memories, then read: a rebinding never resets them
    reset = """\
    class Memory(nn.Module):
        def __init__(self):
            super().__init__()
            self.mems = [torch.ones(3), torch.ones(3)]

        def forward(self, x):
            out = []
            for m in self.mems:
                m.zero_()
                out.append(m + x)
            return out
    """
    out = fixed(reset)
    assert "m.zero_()" in out and "m = " not in out, out


def test_a_name_read_with_list_or_dict_methods_is_never_rewritten_as_a_tensor():
    body = """\
    def collect(outs, y):
        outs += [y]
        outs.append(y)
        return outs
    """
    assert fixed(body) == textwrap.dedent(body)


# ----------------------------------------------------------------- a save no backward reaches (group 1)


def test_an_output_only_sampled_into_a_mask_is_never_backpropagated():
    body = """\
    class Drop(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            keep = torch.sigmoid(self.fc(x))
            keep.clamp_(0.1, 0.9)
            mask = {sample}
            return x * mask
    """
    assert codes(body.format(sample="torch.bernoulli(keep).bool()")) == []
    assert codes(body.format(sample="keep.bernoulli().bool()")) == []
    assert codes(body.format(sample="torch.bernoulli(keep)")) == [("IPF103", 8)]  # differentiated: raises
    # pyro's Rejector.rsample samples through a local helper that only calls torch.bernoulli
    rejector = """\
    def rsample(log_prob_accept: torch.Tensor, generator=None):
        def bernoulli(probs):
            if generator is None:
                return torch.bernoulli(probs)
            return torch.bernoulli(probs, generator=generator)

        probs = torch.exp(log_prob_accept).clamp_(0.0, 1.0)
        done = bernoulli(probs).bool()
        return done
    """
    assert codes(rejector) == []

    x = torch.randn(3, requires_grad=True)
    keep = torch.sigmoid(x)
    keep.clamp_(0.1, 0.9)
    mask = torch.bernoulli(keep).bool()
    (x * mask).sum().backward()  # torch agrees: backward never reaches the sigmoid
    x = torch.randn(3, requires_grad=True)
    keep = torch.sigmoid(x)
    keep.clamp_(0.1, 0.9)
    assert raises_at_backward(lambda: (x * torch.bernoulli(keep)).sum().backward())


def test_a_metadata_dict_is_never_a_saved_tensor():
    # monai's NrrdReader: `header = self._switch_lps_ras(header)`, whose `header[...]` element goes
    # through a matrix product; then `header[MetaKeys.SPACE] = ...` writes the dict, not a tensor
    body = """\
    class Keys:
        AFFINE = "affine"
        SPACE = "space"


    def orientation_ras_lps(affine):
        flip = torch.diag(torch.tensor([-1.0, -1.0, 1.0, 1.0]))
        return flip @ affine


    class Reader:
        def _switch_lps_ras(self, header{ann}):
            header[Keys.AFFINE] = orientation_ras_lps(header[Keys.AFFINE])
            return header

        def get_data(self, header):
            header = self._switch_lps_ras(header)
            {use}
            header[Keys.SPACE] = "RAS"
            return header
    """
    assert codes(body.format(ann=": dict", use="pass")) == []
    assert codes(body.format(ann="", use="header.pop('sizes')")) == []


CLASSMETHOD_VIEW = '''
class Pair:
    @classmethod
    def helper(cls, x, y):
        a, b = x.chunk(2)
        a.mul_(2)
        return a.sum() + b.sum() + y.sum()

    def total(self, w):
        return self.helper(torch.zeros(4), torch.ones(4, requires_grad=True) * w)
'''


def test_a_classmethods_arguments_are_matched_after_cls():
    """``self.helper(torch.zeros(4), ...)`` hands ``x`` the zeros: ``cls`` is bound, like
    ``self`` (review32: ``x`` was matched with the second argument, which requires grad, and the
    write into its chunk was proven)."""
    assert codes(CLASSMETHOD_VIEW) == []
    scope: dict = {"torch": torch, "nn": nn}
    exec(CLASSMETHOD_VIEW, scope)
    scope["Pair"]().total(2.0).backward()  # PyTorch raises nothing: the chunked tensor needs no grad
