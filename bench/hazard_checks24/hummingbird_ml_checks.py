"""hummingbird-ml 0.4.12 (hummingbird/ml/operator_converters/_decomposition_implementations.py:80, :81, :82
`KernelPCA.forward`; _linear_implementations.py:75, :77, :79 `LinearModel.forward`): the proven findings of
`inplacefix check` (stop 58, fresh58, end of stop).
- KernelPCA, rbf kernel: `k = torch.exp(-self.gamma * k)` (:59) saves its output and the centring `k -=
  self.k_fit_rows` (:80), `k -= k_pred_cols` (:81), `k += self.k_fit_all` (:82) writes it: with an input that
  requires grad, backward raises at each (the later ones out of place; the earlier ones through `.data`, the same tensor kept without
  a version bump, as fresh57 isolated torchpq's repeated writes). :81 and :82 raise only so: with :80 rebound out of
  place they write the subtraction's output, which nothing saved.
- LinearModel, a multi-class one-vs-rest classifier with the log loss: `output = torch.sigmoid(output)` (:66) saves its
  output and `output /= torch.sum(output, ...)` (:79) writes it: backward raises.
Real by this file's convention: hummingbird compiles trained scikit-learn models into tensor programs for inference;
an input that requires grad (attributions, adversarial inputs through the compiled model) raises.
- :75 `output[all_zero, :] = 1` and :77 `output /= prob_sum.view(...)` run only when `self.loss == "modified_huber"`
  (:68), and then `output` is the clip of :62 (its `+= 1`, `/= 2`), which saves its input, not its output; the
  sigmoid the check names runs only on the `else` arm of the same test at :61. Nothing between the two tests can
  change `self.loss` (torch.clip and in-place arithmetic on a local). So no use raises at :75 or :77. False
  (same-attribute-test-exclusive: fresh58_probes.py). The context rewrites the first test to take the sigmoid arm
  (not as shipped) to an op that saves its output (a relu, so that a row can still sum to zero): then both
  writes spoil it.
The methods are compiled alone from the shipped files, with a stand-in self."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

DEC = src("hummingbird/ml/operator_converters/_decomposition_implementations.py")
LIN = src("hummingbird/ml/operator_converters/_linear_implementations.py")
KTEXT = {80: ("k -= self.k_fit_rows", "k = k - self.k_fit_rows"), 81: ("k -= k_pred_cols", "k = k - k_pred_cols"),
         82: ("k += self.k_fit_all", "k = k + self.k_fit_all")}
for n, (text, _) in KTEXT.items():
    assert linecache.getline(DEC, n).strip() == text, n
assert linecache.getline(LIN, 61).strip() == 'if self.loss == "modified_huber":'
assert linecache.getline(LIN, 75).strip() == "output[all_zero, :] = 1"
assert linecache.getline(LIN, 77).strip() == "output /= prob_sum.view((output.shape[0], -1))"
assert linecache.getline(LIN, 79).strip() == "output /= torch.sum(output, dim=1, keepdim=True)"


def run_kpca(shipped, data=True):
    replace = {n: out for n, (_, out) in KTEXT.items() if n != shipped}
    for n in KTEXT:  # an earlier centring step kept the exp output through .data (no version bump)
        if data and shipped and n < shipped:
            replace[n] = KTEXT[n][0].replace("k ", "k.data ", 1)
    ns = compile_alone(DEC, {"KernelPCA.forward"}, {"torch": torch}, replace=replace)

    def go():
        torch.manual_seed(0)
        me = types.SimpleNamespace(kernel="rbf", n_features=4, sv=torch.randn(6, 4), gamma=0.25, n_samples=6,
                                   k_fit_rows=torch.randn(6), k_fit_all=0.3, scaled_alphas=torch.randn(6, 2),
                                   coef0=1.0, degree=3)
        x = torch.randn(5, 4, requires_grad=True)
        ns["forward"](me, x).sum().backward()
        assert x.grad is not None
    return go


def run_lin(loss, replace=None, zero_row=False):
    ns = compile_alone(LIN, {"LinearModel.forward"}, {"torch": torch}, replace=replace or {})

    def go():
        torch.manual_seed(0)
        me = types.SimpleNamespace(coefficients=torch.randn(4, 3), intercepts=torch.randn(3),
                                   classes=torch.IntTensor([0, 1, 2]), multi_class="ovr", loss=loss,
                                   regression=False, binary_classification=False)
        x0 = torch.randn(5, 4)
        if zero_row:  # a row whose three scores are all <= -1: modified_huber's all-zero fix-up (:75) runs
            me.coefficients, me.intercepts = torch.eye(4)[:, :3], torch.zeros(3)
            x0[0, :3] = -3.0
        x = x0.clone().requires_grad_(True)
        _, prob = ns["forward"](me, x)
        prob.sum().backward()
        assert x.grad is not None
    return go


for n in (80, 81, 82):
    fid = f"hummingbird/ml/operator_converters/_decomposition_implementations.py:{n}:IPF101"
    attempt(fid, "path", f"KernelPCA(rbf).forward(x), x that requires grad, :{n} as shipped (earlier centring "
            "steps through .data, later ones out of place): the write spoils exp's saved output, backward raises", run_kpca(n))
    attempt(fid, "control", "all three out of place: runs", run_kpca(None))
    if n > 80:
        attempt(fid, "context", f":{n} as shipped, :80 rebound out of place (k = k - ...): :{n} writes the "
                "subtraction's output, nothing saved: runs", run_kpca(n, data=False))
LIN79 = "hummingbird/ml/operator_converters/_linear_implementations.py:79:IPF101"
attempt(LIN79, "path", "LinearModel.forward(x), three classes, one-vs-rest, log loss, x that requires grad: "
        "`output /= sum` spoils the sigmoid's saved output, backward raises", run_lin("log"))
attempt(LIN79, "control", "output = output / sum: runs",
        run_lin("log", {79: "output = output / torch.sum(output, dim=1, keepdim=True)"}))
for n, code in ((75, "IPF104"), (77, "IPF101")):
    fid = f"hummingbird/ml/operator_converters/_linear_implementations.py:{n}:{code}"
    attempt(fid, "path", "LinearModel.forward(x), three classes, one-vs-rest, modified_huber loss, a row with all "
            "scores <= -1 (the fix-up runs), x that requires grad: output is the clip's, backward runs",
            run_lin("modified_huber", zero_row=True))
    attempt(fid, "context", "the first arm (:62-:64) rewritten to a relu, which saves its output as the sigmoid does "
            "(not as shipped; the relu so that the fix-up row still sums to zero): the writes spoil the saved output", run_lin("modified_huber", {62: "output = torch.relu(output)", 63: "pass", 64: "pass"},
                                          zero_row=True))
