"""recstudio 0.0.2a1: the six proven findings of `inplacefix check` (stop 55, fresh55, end of stop). Every function
is compiled alone from the shipped file (stand-in self, the library's imports as torch, F and numpy).

- model/loss_func.py:70 (`Top1Loss.forward`): `loss += torch.sigmoid(neg_score ** 2)` writes the output of
  `torch.sigmoid` (:69), which sigmoid saved. The loss of a retriever trained with scores that require grad: real in
  the library's own use.
- model/basemodel/baseretriever.py:312 (`BaseRetriever.sampling`, method 'brute' with excluding_hist):
  `sampling_prob[row_index, pos_items] = 0.0` writes `all_prob` (sampling_prob is the same tensor), which
  `torch.gather` (:305) saved for `log_pos_prob`; a query from the query encoder requires grad: real in own use
  (the sampled-softmax losses differentiate log_pos_prob).
- model/mf/irgan.py:137 and :139 (`Generator.forward`): `prob_with_imp_sampling.scatter_(1, pos_items,
  prob_with_imp_sampling.gather(...) + ...)` and `prob_with_imp_sampling[:, 0] = 0.0` write the tensor that the
  gather saved. But the importance-sampling probabilities feed only `torch.multinomial` and `weight`, which forward
  hands back `.detach()`ed; the loss differentiates `neg_prob = prob.gather(...)`, which does not reach the gather's
  node: false (non-differentiable-sink, the `.detach()` form). The context runs show the writes raise once the
  weight is handed back undetached.
- ann/sampler.py:273 (`MIDXSamplerUniform._update`) and :425 (`ClusterSamplerUniform._update`):
  `self.cp[start:end] = cumsum / cumsum[-1]` is read as a write into `norm` (exp's saved output), but `self.cp =
  norm[self.indices]` with `self.indices` the long tensor of sorted positions (`construct_index`'s `torch.sort`),
  an advanced-index copy: nothing saved is written, false (attribute-index-read-as-view). At :425 the line before
  (`self.cp[start:end].cumsum()`, no dim) raises TypeError first, so the write is never reached either; with a dim
  given it runs as :273.
"""

import _shim  # noqa: F401
import linecache
import types

import numpy as np
import torch
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src

LOSS = src("recstudio/model/loss_func.py")
RETR = src("recstudio/model/basemodel/baseretriever.py")
IRGAN = src("recstudio/model/mf/irgan.py")
SAMP = src("recstudio/ann/sampler.py")
assert linecache.getline(LOSS, 70).strip() == "loss += torch.sigmoid(neg_score ** 2)"
assert linecache.getline(RETR, 312).strip() == "sampling_prob[row_index, pos_items] = 0.0"
assert linecache.getline(IRGAN, 139).strip() == "prob_with_imp_sampling[:, 0] = 0.0"
assert linecache.getline(SAMP, 273).strip() == "self.cp[start:end] = cumsum / cumsum[-1]"
assert linecache.getline(SAMP, 425).strip() == "self.cp[start:end] = cumsum / cumsum[-1]"
assert linecache.getline(SAMP, 424).strip() == "cumsum = self.cp[start:end].cumsum()"
NS = {"torch": torch, "F": F, "np": np, "Tuple": tuple, "List": list}


# --- loss_func.py:70
def top1(control=False):
    replace = {70: "loss = loss + torch.sigmoid(neg_score ** 2)"} if control else {}
    ns = compile_alone(LOSS, {"Top1Loss.forward"}, dict(NS), replace=replace)

    def go():
        pos = torch.randn(4, requires_grad=True)
        neg = torch.randn(4, 5, requires_grad=True)
        ns["forward"](types.SimpleNamespace(dns=False), None, pos, None, neg, None).backward()
    return go


FID = "recstudio/model/loss_func.py:70:IPF101"
attempt(FID, "path", "Top1Loss (dns off) on positive and negative scores that require grad, backward: raises", top1())
attempt(FID, "control", "the same with :70 out of place: runs", top1(control=True))


# --- baseretriever.py:312
def brute(control=False):
    replace = {312: "sampling_prob = sampling_prob.index_put((row_index, pos_items), torch.tensor(0.0))"} \
        if control else {}
    ns = compile_alone(RETR, {"BaseRetriever.sampling"}, dict(NS), replace=replace)

    def go():
        enc = torch.nn.Embedding(6, 4)
        me = types.SimpleNamespace(
            fiid="item_id", sampler=None, item_vector=torch.randn(9, 4),
            query_encoder=enc, _get_query_feat=lambda batch: batch["user_id"],
            score_func=lambda q, items: q @ items.T)
        batch = {"item_id": torch.tensor([[1], [3], [2]]), "user_id": torch.tensor([0, 2, 5])}
        (log_pos_prob, neg_id, log_neg_prob), query = ns["sampling"](me, batch, 4, "brute", True, 1, True)
        (log_pos_prob.sum() + log_neg_prob.sum()).backward()
        assert enc.weight.grad is not None
    return go


FID = "recstudio/model/basemodel/baseretriever.py:312:IPF104"
attempt(FID, "path", "sampling(method='brute', excluding_hist=True), a query from an Embedding encoder, backward of "
        "log_pos_prob + log_neg_prob: raises", brute())
attempt(FID, "control", "the same with :312 out of place (index_put): runs", brute(control=True))


# --- irgan.py:137, 139
def irgan(undetached=False, only=None):
    replace = {}
    if undetached:
        replace[145] = "return weight, neg_items.detach(), neg_prob"
    if only == 139:  # :137 out of place, to show :139 alone
        replace[137] = ("prob_with_imp_sampling = prob_with_imp_sampling.scatter(1, pos_items, "
                        "prob_with_imp_sampling.gather(1, pos_items) + self.config['sample_lambda'] / num_pos)")
    if only == 137:  # :139 through .data
        replace[139] = "prob_with_imp_sampling.data[:, 0] = 0.0"
    ns = compile_alone(IRGAN, {"Generator.forward"}, dict(NS), replace=replace)

    def go():
        enc = torch.nn.Embedding(5, 4)
        items = torch.nn.Embedding(9, 4)
        me = types.SimpleNamespace(config={"T_gen": 1.0, "sample_lambda": 0.2},
                                   score_func=lambda q, v: q @ v.T, _get_item_vector=lambda: items.weight[1:])
        query = enc(torch.tensor([0, 1, 4]))
        pos_items = torch.tensor([[1, 2], [3, 0], [8, 5]])
        weight, item_ids, prob_neg = ns["forward"](me, query, 3, pos_items)
        rewards = torch.rand(item_ids.shape)
        loss = -torch.sum(torch.mean(torch.log(prob_neg) * rewards, dim=1))  # Generator.training_step's loss
        if undetached:
            loss = loss + weight.sum()
        loss.backward()
        assert enc.weight.grad is not None
    return go


assert linecache.getline(IRGAN, 145).strip() == "return weight.detach(), neg_items.detach(), neg_prob"
for n in (137, 139):
    FID = f"recstudio/model/mf/irgan.py:{n}:IPF10{3 if n == 137 else 4}"
    attempt(FID, "path", "Generator.forward on a query from an Embedding, backward of training_step's loss "
            "(log(neg_prob) * rewards): runs, the importance weights are handed back detached", irgan(only=n))
    attempt(FID, "context", f"the same with the weight handed back undetached and added to the loss, :{n} alone as "
            "shipped: " + ("raises" if n == 137 else "runs (with :137 out of place the gather saved another tensor)"),
            irgan(undetached=True, only=n))
    attempt(FID, "context", "the same with both lines as shipped: raises", irgan(undetached=True))


# --- sampler.py:273, 425
def sampler(qualname, line, fixed_dim=False):
    replace = {424: "cumsum = self.cp[start:end].cumsum(0)"} if fixed_dim else {}
    Euclid = type("EuclideanScorer", (), {})
    ns = compile_alone(SAMP, {qualname, "construct_index"},
                       dict(NS, scorer=types.SimpleNamespace(EuclideanScorer=Euclid)), replace=replace)
    fn = ns["_update"]

    def go():
        K = 2
        emb = torch.randn(12, 4, requires_grad=True)
        cd = torch.randint(0, K, (12,))
        me = types.SimpleNamespace(scorer=Euclid(), K=K)
        if line == 273:
            cd0m = F.one_hot(cd, K).float()
            cd1m = F.one_hot(torch.randint(0, K, (12,)), K).float()
            me.indices, me.indptr = ns["construct_index"](cd * K + cd1m.argmax(1), K ** 2)
            fn(me, emb, cd0m, cd1m)
        else:
            me.indices, me.indptr = ns["construct_index"](cd, K)
            fn(me, emb, F.one_hot(cd, K).float())
        (me.wkk.sum() + me.p.sum() + me.cp.sum()).backward()
        assert emb.grad is not None
    return go


FID = "recstudio/ann/sampler.py:273:IPF104"
attempt(FID, "path", "MIDXSamplerUniform._update (Euclidean scorer) on item embeddings that require grad, indices "
        "from construct_index, backward of wkk, p and cp: runs (cp is an index copy of norm)",
        sampler("MIDXSamplerUniform._update", 273))
FID = "recstudio/ann/sampler.py:425:IPF104"
attempt(FID, "context", "ClusterSamplerUniform._update as shipped: TypeError at :424 (cumsum() without dim), the write "
        "is never reached", sampler("ClusterSamplerUniform._update", 425), expected=(TypeError,))
attempt(FID, "path", "the same with :424 given dim 0, backward of wkk, p and cp: runs (cp is an index copy of "
        "norm)", sampler("ClusterSamplerUniform._update", 425, fixed_dim=True))
