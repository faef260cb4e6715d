"""mergekit 0.1.5 (moe/router.py:148, `get_gate_params`): the proven finding of `inplacefix check` on main 7911fb7
(stop 53, fresh53). `hidden_states /= hidden_states.norm(...)` writes the tensor that norm saved. get_gate_params
takes a model reference, a tokenizer and prompts, no tensor; its hidden states come from get_hidden_states, which
runs the model under torch.no_grad(), or ("cheap_embed") from the embedding matrix read from the checkpoint with
the lazy loader (no grad): false in every use. get_gate_params, get_hidden_states, get_cheap_embedding and
tokenize_prompts are compiled alone from the shipped file; stand-ins: a tiny causal LM whose parameters require
grad (AutoModelForCausalLM.from_pretrained), a tokenizer, a model reference, tqdm. The runs stop at the return."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

SRC = src("mergekit/moe/router.py")
assert linecache.getline(SRC, 148).strip() == \
    "hidden_states /= hidden_states.norm(p=2, dim=-1, keepdim=True).clamp(min=1e-8)"
OUT = "hidden_states = hidden_states / hidden_states.norm(p=2, dim=-1, keepdim=True).clamp(min=1e-8)"
H, V, L = 8, 12, 2


class Encoding(dict):
    def to(self, device):
        return self


class Tok:
    bos_token = None

    def __call__(self, texts, return_tensors=None, padding=True, add_special_tokens=False):
        ids = torch.tensor([[3 + len(w) % 9 for w in t.split()][:4] + [0] * (4 - len(t.split()[:4])) for t in texts])
        return Encoding(input_ids=ids, attention_mask=torch.ones_like(ids))


class LM(torch.nn.Module):
    device = "cpu"

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(V, H)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(H, H) for _ in range(L))

    def forward(self, input_ids, attention_mask=None, output_hidden_states=True, return_dict=True):
        h = [self.emb(input_ids)]
        for layer in self.layers:
            h.append(torch.tanh(layer(h[-1])))
        return types.SimpleNamespace(hidden_states=tuple(h))


def run(mode, replace=None, grad_embed=False):
    def go():
        cfg = types.SimpleNamespace(num_hidden_layers=L, hidden_size=H, vocab_size=V)
        embed = torch.randn(V, H, requires_grad=grad_embed)
        ref = types.SimpleNamespace(config=lambda trust_remote_code=False: cfg,
                                    model=types.SimpleNamespace(path="stand-in", revision=None),
                                    lazy_loader=lambda lazy_unpickle=False: types.SimpleNamespace(get_tensor=lambda n: embed))
        ns = {"torch": torch, "math": __import__("math"), "tqdm": types.SimpleNamespace(tqdm=lambda it, desc=None: it),
              "transformers": types.SimpleNamespace(),
              "AutoModelForCausalLM": types.SimpleNamespace(from_pretrained=lambda *a, **k: LM())}
        compile_alone(SRC, {"get_gate_params", "get_hidden_states", "get_cheap_embedding", "tokenize_prompts"}, ns,
                      replace=replace)
        experts = [types.SimpleNamespace(positive_prompts=["a b c", "d e"], negative_prompts=["f g h i"]),
                   types.SimpleNamespace(positive_prompts=["x y"], negative_prompts=None)]
        gates = ns["get_gate_params"](ref, Tok(), experts, mode=mode, device="cpu")
        if gates.requires_grad:
            gates.sum().backward()
    return go


F = "mergekit/moe/router.py:148:IPF101"
attempt(F, "path", "mode hidden (the default), stand-in LM whose parameters require grad, grad on: get_hidden_states "
        "runs it under no_grad, the gate vectors have no grad, nothing to differentiate", run("hidden"))
attempt(F, "path", "mode hidden_avg: the same", run("hidden_avg"))
attempt(F, "path", "mode cheap_embed, the embedding matrix as the lazy loader gives it (no grad): the same",
        run("cheap_embed"))
attempt(F, "context", "cheap_embed with an embedding matrix that requires grad (never in mergekit): raises",
        run("cheap_embed", grad_embed=True))
attempt(F, "control", "that, with :148 out of place: runs", run("cheap_embed", {148: OUT}, grad_embed=True))
