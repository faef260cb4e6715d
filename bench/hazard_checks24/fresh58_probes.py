"""Stop 58 (fresh58, end of stop): one small program per false group of the proven tier found on the code bases
first measured by fresh58. The measured main proves each `probe` (`inplacefix check fresh58_probes.py`), and each
probe runs backward fine (`python fresh58_probes.py`), except saver-already-spoiled's, whose program raises for
another write whatever the proven one does (said there); each has a control, the same code with what makes it safe
taken away, that raises the in-place error (at backward, or the leaf error at the write)."""

import torch
from torch import Tensor


# mutation-as-output-constant-factor (adfwi-torch acoustic_fwi.py:174, :175, elastic_fwi.py:158, :159,
# dip_acoustic_fwi.py:169, :170): a helper writes `w[i] = w[i] * mask` into its argument and returns it; the caller
# writes the result. The mask is a fresh zeros tensor, which never requires grad, so the product saves only the mask
# and nothing of w; the check reads the returned w as a saved output of the product.
def _mute(w: Tensor) -> Tensor:
    for i in range(w.shape[0]):
        mask = torch.zeros_like(w[i])
        mask[:, :2] = 1
        w[i] = w[i] * mask
    return w


def mute_probe(syn: Tensor) -> Tensor:
    syn = _mute(syn)
    tmp = syn.clone()
    for i in range(syn.shape[0]):
        syn[i] = tmp[i] * 2
    return syn.sum()


def _mute_control(w: Tensor, mask: Tensor) -> Tensor:
    for i in range(w.shape[0]):
        w[i] = w[i] * mask
    return w


def mute_control(syn: Tensor, mask: Tensor) -> Tensor:  # a mask that may require grad: the product saves w[i]
    syn = _mute_control(syn, mask)
    tmp = syn.clone()
    for i in range(syn.shape[0]):
        syn[i] = tmp[i] * 2
    return syn.sum()


# container-elements-read-as-one (deepspeed op_builder/supa/fused_adam.py:55, twice): `g = lists[0][i]` and
# `v = lists[3][i]` are elements of two different lists of one container parameter (grads and exp_avg_sqs); the
# write of v never touches the g that addcmul_ saved. The check reads the two subscripts as one tensor.
def adam_probe(lists: list, beta2: float) -> None:
    for i in range(len(lists[0])):
        g = lists[0][i].float()
        v = lists[3][i]
        v.mul_(beta2).addcmul_(g, g, value=1.0 - beta2)


def adam_control(lists: list, beta2: float) -> None:  # v is the same element as g: the write spoils what it saved
    for i in range(len(lists[0])):
        g = lists[0][i].float()
        v = lists[0][i]
        v.mul_(beta2).addcmul_(g, g, value=1.0 - beta2)


# saver-already-spoiled (diffct-mlx geometry.py:550): `v[i] = torch.cross(...)` writes the next row of v, which the
# previous row's norm and division saved; but their result reaches the graph only through the normalising write of
# that row (the next line), which writes the saved row itself first, so the cross write adds nothing. This group
# cannot have a probe that runs: the program raises for the normalising write whatever the cross write does. The
# probe is the shipped shape (both writes proven); `python fresh58_probes.py` shows that it raises with the cross
# write out of place too, and runs with only the normalising write on a fresh copy (rows_probe_fixed, whose cross
# write the check no longer proves): fixing the proven cross write is never needed.
def rows_probe(a: Tensor, n: int) -> Tensor:
    v = torch.zeros(n, 3)
    for i in range(n):
        v[i] = torch.cross(a[i], torch.tensor([0.0, 0.0, 1.0]), dim=0)
        v[i] = v[i] / torch.norm(v[i])
    return v


def rows_probe_cross_out(a: Tensor, n: int) -> Tensor:  # the proven cross write out of place: still raises
    v = torch.zeros(n, 3)
    for i in range(n):
        c = torch.cross(a[i], torch.tensor([0.0, 0.0, 1.0]), dim=0)
        v = torch.cat([v[:i], c[None], v[i + 1:]])
        v[i] = v[i] / torch.norm(v[i])
    return v


def rows_probe_fixed(a: Tensor, n: int) -> Tensor:  # only the normalising write on a fresh copy: runs
    v = torch.zeros(n, 3)
    for i in range(n):
        v[i] = torch.cross(a[i], torch.tensor([0.0, 0.0, 1.0]), dim=0)
        u = v[i] / torch.norm(v[i])
        v = v.clone()
        v[i] = u
    return v


def rows_control(a: Tensor, n: int) -> Tensor:  # the row normalised out of place: the next row write spoils it
    v = torch.zeros(n, 3)
    total = torch.zeros(())
    for i in range(n):
        v[i] = torch.cross(a[i], torch.tensor([0.0, 0.0, 1.0]), dim=0)
        u = v[i] / torch.norm(v[i])
        total = total + u.sum()
    return v.sum() + total


# same-attribute-test-exclusive (hummingbird-ml _linear_implementations.py:75, :77): the saver (a sigmoid) runs on
# the `else` arm of `if self.loss == "huber":`, the writes under a second `if self.loss == "huber":`; nothing between
# the tests can change self.loss, so the writes only ever see the clip's output, which saves nothing of its own.
class ProbsProbe(torch.nn.Module):
    def __init__(self, loss: str):
        super().__init__()
        self.loss = loss

    def forward(self, x: Tensor) -> Tensor:
        if self.loss == "huber":
            out = torch.clip(x, -1, 1)
            out += 1
        else:
            out = torch.sigmoid(x)
        if self.loss == "huber":
            out /= 2
        return out


class ProbsControl(torch.nn.Module):  # the second test reads another attribute: the sigmoid arm meets the write
    def __init__(self, loss: str):
        super().__init__()
        self.loss = loss
        self.halve = True

    def forward(self, x: Tensor) -> Tensor:
        if self.loss == "huber":
            out = torch.clip(x, -1, 1)
            out += 1
        else:
            out = torch.sigmoid(x)
        if self.halve:
            out /= 2
        return out


# scripting-arm-leaf (mmrazor fake_quants/lsq.py:290): `self.scale.copy_(val)` writes a Parameter with grad on, but
# under `if torch.jit.is_scripting():`, which is False whenever Python runs the method.
class ScaleProbe(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))

    def load(self, val: Tensor) -> None:
        if torch.jit.is_scripting():
            self.scale.copy_(val)


class ScaleControl(torch.nn.Module):  # the test negated: the copy runs eagerly and raises the leaf error
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))

    def load(self, val: Tensor) -> None:
        if not torch.jit.is_scripting():
            self.scale.copy_(val)


# index-only-saver, with comparisons (mmtrack quasi_dense_tracker.py:248, :259): the softmax's output is written, but
# the scores reach only `torch.max(...)`, whose value is compared with a threshold and whose index picks an id; what
# the method returns carries nothing of the softmax, so no backward reads what it saved.
def match_probe(embeds: Tensor, memo: Tensor, mask: Tensor) -> Tensor:
    scores = torch.mm(embeds, memo.t()).softmax(dim=1)
    scores *= mask
    ids = torch.full((embeds.shape[0],), -1, dtype=torch.long)
    for i in range(embeds.shape[0]):
        conf, ind = torch.max(scores[i, :], dim=0)
        if conf > 0.1:
            ids[i] = ind
            scores[i + 1:, ind] = 0
    return ids


def match_control(embeds: Tensor, memo: Tensor, mask: Tensor) -> Tensor:  # the confidences are returned
    scores = torch.mm(embeds, memo.t()).softmax(dim=1)
    scores *= mask
    total = torch.zeros(())
    for i in range(embeds.shape[0]):
        conf, ind = torch.max(scores[i, :], dim=0)
        total = total + conf
        scores[i + 1:, ind] = 0
    return total


def main():
    from _probe_run import raises, runs

    def mute(fn, *extra):
        x = torch.randn(2, 5, 4, requires_grad=True)
        fn(x * 1, *extra).backward()
        assert x.grad is not None

    print("mutation-as-output-constant-factor probe", runs(lambda: mute(mute_probe)))
    print("mutation-as-output-constant-factor control",
          raises(lambda: mute(mute_control, torch.rand(5, 4, requires_grad=True))))

    def adam(fn):
        w = torch.randn(2, 3, requires_grad=True)
        g = torch.autograd.grad((w ** 3).sum(), w, create_graph=True)[0]
        grads = [g[0] * 1, g[1] * 1]
        lists = [grads, [torch.randn(3), torch.randn(3)], [torch.zeros(3)] * 2, [torch.zeros(3), torch.zeros(3)]]
        fn(lists, 0.999)
        sum(t.sum() for t in lists[3] + lists[0]).backward()
        assert w.grad is not None

    print("container-elements-read-as-one probe", runs(lambda: adam(adam_probe)))
    print("container-elements-read-as-one control", raises(lambda: adam(adam_control)))

    def rows(fn):
        a = torch.randn(4, 3, requires_grad=True)
        fn(a * 1, 4).sum().backward()
        assert a.grad is not None

    print("saver-already-spoiled probe (shipped shape)", raises(lambda: rows(rows_probe)))
    print("saver-already-spoiled probe, the proven cross write out of place", raises(lambda: rows(rows_probe_cross_out)))
    print("saver-already-spoiled probe, only the normalising write on a fresh copy", runs(lambda: rows(rows_probe_fixed)))
    print("saver-already-spoiled control", raises(lambda: rows(rows_control)))

    def probs(cls):
        x = torch.randn(3, 4, requires_grad=True)
        cls("log")(x * 1).sum().backward()
        cls("huber")(x * 1).sum().backward()
        assert x.grad is not None

    print("same-attribute-test-exclusive probe", runs(lambda: probs(ProbsProbe)))
    print("same-attribute-test-exclusive control", raises(lambda: probs(ProbsControl)))

    def scale(cls):
        m = cls()
        m.load(torch.tensor([0.5]))
        (m.scale * 2).sum().backward()

    print("scripting-arm-leaf probe", runs(lambda: scale(ScaleProbe)))
    print("scripting-arm-leaf control", raises(lambda: scale(ScaleControl)))

    def match(fn):
        torch.manual_seed(0)
        head = torch.nn.Linear(4, 8)
        out = fn(head(torch.randn(3, 4)), torch.randn(3, 8), torch.ones(3, 3))
        loss = head.weight.sum() + (out.float().sum() * 0 if out.dtype == torch.long else out)
        loss.backward()

    print("index-only-saver probe", runs(lambda: match(match_probe)))
    print("index-only-saver control", raises(lambda: match(match_control)))


if __name__ == "__main__":
    main()
