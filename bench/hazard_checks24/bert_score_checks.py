"""bert-score 0.3.13 (score.py:254, :255 `plot_example`; scorer.py:285, :286 `BERTScorer.plot_example`): the proven
findings of `inplacefix check` on main 7911fb7 (stop 53, fresh53). `ref_embedding.div_(torch.norm(ref_embedding,
...))` writes the tensor that norm saved. The embeddings come from utils.get_bert_embedding, which runs the model
under torch.no_grad() (and bert_encode does again), and plot_example takes only strings, so nothing it writes can
require grad: false in every use. plot_example and the utils helpers it calls (get_bert_embedding, bert_encode,
collate_idf, padding, sent_encode) are compiled alone from the shipped files; stand-ins: a tiny embedding model
whose parameters require grad, a whitespace tokenizer, `version`/`trans_version` for transformers 4.x; each run
stops right after the flagged pair (`return`, before the plotting)."""

import _shim  # noqa: F401
import linecache
import types
from collections import defaultdict

import torch
from _check import attempt
from _fresh53 import compile_alone, src

SCORE, SCORER, UTILS = src("bert_score/score.py"), src("bert_score/scorer.py"), src("bert_score/utils.py")
for path, line in ((SCORE, 254), (SCORER, 285)):
    assert linecache.getline(path, line).strip() == "ref_embedding.div_(torch.norm(ref_embedding, dim=-1).unsqueeze(-1))"
    assert linecache.getline(path, line + 1).strip() == "hyp_embedding.div_(torch.norm(hyp_embedding, dim=-1).unsqueeze(-1))"


class Tok:
    cls_token_id, sep_token_id, pad_token_id, model_max_length = 0, 1, 2, 64

    def encode(self, sent, add_special_tokens=True, max_length=None, truncation=True):
        return [0] + [3 + len(w) % 7 for w in sent.split()] + [1]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 8)  # parameters require grad

    def forward(self, x, attention_mask=None, output_hidden_states=False):
        return (self.emb(x),)


def namespace(embedding=None):
    ns = {"torch": torch, "defaultdict": defaultdict, "GPT2Tokenizer": type("G", (), {}),
          "RobertaTokenizer": type("R", (), {}), "trans_version": "4.40.0",
          "version": types.SimpleNamespace(parse=lambda s: tuple(int(p) for p in s.split(".")[:2])),
          "get_tokenizer": lambda *a: Tok(), "get_model": lambda *a: Model()}
    compile_alone(UTILS, {"get_bert_embedding", "bert_encode", "collate_idf", "padding", "sent_encode"}, ns)
    if embedding:  # context: an embedding that requires grad (never in bert-score)
        ns["get_bert_embedding"] = embedding
    return ns


def grad_embedding(sents, *a, **k):
    leaf = torch.randn(1, 5, 8, requires_grad=True)
    return leaf * 1.0, torch.ones(1, 5), torch.ones(1, 5)


def score(which, embedding=None, control=False):
    stop = "return sim, ref_embedding, hyp_embedding"
    if which == "score":
        replace = {257: stop}
        if control:
            replace.update({254: "ref_embedding = ref_embedding.div(torch.norm(ref_embedding, dim=-1).unsqueeze(-1))",
                            255: "hyp_embedding = hyp_embedding.div(torch.norm(hyp_embedding, dim=-1).unsqueeze(-1))"})
        ns = compile_alone(SCORE, {"plot_example"}, namespace(embedding), replace=replace)
        call = lambda: ns["plot_example"]("a cat sat", "the cat sat down", model_type="stand-in", num_layers=1)
    else:
        replace = {288: stop}
        if control:
            replace.update({285: "ref_embedding = ref_embedding.div(torch.norm(ref_embedding, dim=-1).unsqueeze(-1))",
                            286: "hyp_embedding = hyp_embedding.div(torch.norm(hyp_embedding, dim=-1).unsqueeze(-1))"})
        ns = compile_alone(SCORER, {"BERTScorer.plot_example"}, namespace(embedding), replace=replace)
        me = types.SimpleNamespace(_tokenizer=Tok(), _model=Model(), device="cpu")
        call = lambda: ns["plot_example"](me, "a cat sat", "the cat sat down")

    def go():
        sim, ref, hyp = call()
        if not sim.requires_grad:  # the whole computation is outside autograd: there is no backward to run
            assert not ref.requires_grad and not hyp.requires_grad
            return
        sim.sum().backward()
    return go


for which, path, line in (("score", "bert_score/score.py", 254), ("scorer", "bert_score/scorer.py", 285)):
    for ln in (line, line + 1):
        f = f"{path}:{ln}:IPF103"
        attempt(f, "path", f"{which} plot_example as shipped, grad on, model parameters requiring grad: the "
                "embeddings come out of get_bert_embedding's no_grad without grad, nothing to differentiate", score(which))
        attempt(f, "context", "get_bert_embedding replaced by one whose embedding requires grad (never in bert-score): "
                "raises", score(which, grad_embedding))
        attempt(f, "control", "that stand-in with both div_ lines out of place: runs",
                score(which, grad_embedding, control=True))
