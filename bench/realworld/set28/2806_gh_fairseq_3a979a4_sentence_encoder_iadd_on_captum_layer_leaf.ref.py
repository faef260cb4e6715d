# reference fix for 2806: commit 3a979a4 in the library module (2806helpers_fairseq_sentence_encoder_fixed.py):
# `x = x * self.embed_scale`, `x = x + self.embed_positions(...)`, `x = x + self.segment_embeddings(...)`, `x = x * (1 - ...)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fse = importlib.import_module("2806helpers_fairseq_sentence_encoder_fixed")


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = fse.TransformerSentenceEncoder(padding_idx=1, vocab_size=20, num_encoder_layers=1,
                                                      embedding_dim=16, ffn_embedding_dim=32, num_attention_heads=2,
                                                      max_seq_len=16)
        self.head = torch.nn.Linear(16, 3)

    def forward(self, tokens, segment_labels):
        _, sentence_rep = self.encoder(tokens, segment_labels, last_state_only=True)
        return self.head(sentence_rep)


def layer_integrated_gradients(model, layer, inputs, baselines, extra, target, n_steps=8):
    with torch.no_grad():
        acts = layer(inputs)
        base = layer(baselines)
    alphas = [(i + 1) / n_steps for i in range(n_steps)]
    scaled = torch.cat([base + a * (acts - base) for a in alphas], dim=0).requires_grad_()
    handle = layer.register_forward_hook(lambda module, inp, out: scaled)
    try:
        out = model(inputs.repeat(n_steps, 1), extra.repeat(n_steps, 1))
    finally:
        handle.remove()
    grads = torch.autograd.grad(out[:, target].sum(), scaled)[0]
    grads = grads.view(n_steps, *acts.shape).mean(0)
    return (acts - base) * grads


def compute():
    torch.manual_seed(0)
    model = Classifier()
    model.eval()
    tokens = torch.tensor([[0, 5, 7, 9, 2, 1], [0, 4, 12, 2, 1, 1]])
    segments = torch.tensor([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]])
    baselines = torch.full_like(tokens, 1)
    baselines[:, 0] = 0

    attributions = layer_integrated_gradients(model, model.encoder.embed_tokens, tokens, baselines, segments, target=2)
    logits = model(tokens, segments).detach()
    return {
        "attributions": attributions.detach(),
        "token_attribution": attributions.sum(-1).detach(),
        "logits": logits,
    }


if __name__ == "__main__":
    compute()
