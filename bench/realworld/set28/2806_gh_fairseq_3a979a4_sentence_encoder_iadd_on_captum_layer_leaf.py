# source: https://github.com/facebookresearch/fairseq/commit/3a979a40e66a3a4006da55809b2f4dd6bd517d20
# pattern: augassign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# fairseq's TransformerSentenceEncoder (the BERT / XLM / RoBERTa-style encoder, fairseq/modules/
# transformer_sentence_encoder.py) builds its input with in-place updates of the token embedding:
# `x = self.embed_tokens(tokens)`, then `x *= self.embed_scale`, `x += self.embed_positions(...)`,
# `x += self.segment_embeddings(...)` and `x *= 1 - padding_mask...`. Captum's layer attributions (Captum Insights,
# LayerIntegratedGradients on `embed_tokens`) replace that layer's output, through a forward hook, by the
# interpolated embeddings made a leaf with `requires_grad_()`, so the first in-place update fails with "a leaf Variable
# that requires grad is being used in an in-place operation" (the commit: "When using captum insights, we can't take
# gradients on leaf operations that have in-place operations"). Commit 3a979a4 makes the four updates out of place.
# The library module is 2806helpers_fairseq_sentence_encoder.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a one-layer encoder at small size (vocabulary 20, padding index 1, width 16, default embed_scale
# None, learned positions, two segments) in eval mode with a linear classification head on the sentence
# representation, and Captum's LayerIntegratedGradients written out at small size (layer outputs of the inputs and of
# an all-padding baseline, 8 right Riemann steps, the interpolations concatenated and made a leaf with requires_grad_(),
# returned by a forward hook on embed_tokens, gradients of the target logit by torch.autograd.grad).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fse = importlib.import_module("2806helpers_fairseq_sentence_encoder")


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
