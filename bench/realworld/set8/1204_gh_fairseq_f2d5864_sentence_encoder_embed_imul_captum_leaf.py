# source: https://github.com/facebookresearch/fairseq/commit/f2d5864b6ca7da01237e2d1d85b9227cbd6dd26f
# pattern: augassign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# fairseq, fairseq/modules/transformer_sentence_encoder.py, TransformerSentenceEncoder.forward: the token embeddings
# are scaled and summed in place, `x = self.embed_tokens(tokens)`, `x *= self.embed_scale`,
# `x += self.embed_positions(...)`, `x += self.segment_embeddings(...)`, `x *= 1 - padding_mask...`. Captum Insights
# (layer integrated gradients on embed_tokens) replaces that layer's output with its own interpolated embeddings, leaf
# tensors that require grad, through a forward hook, so the first in-place update fails with "a leaf Variable that
# requires grad is being used in an in-place operation". Commit f2d5864b "Remove in-place operations in
# TransformerSentenceEncoder for captum insights" ("When using captum insights, we can't take gradients on leaf
# operations that have in-place operations"): `x = x * self.embed_scale`, `x = x + ...` for all four.
# The library module is 1204helpers_fairseq_sentence_encoder.py (ref: 1204helpers_fairseq_sentence_encoder_fixed.py).
# Stand-ins: a 2-layer encoder of width 8 without self-attention (see the helper); a linear sentence classifier on
# the first token's state; captum's LayerIntegratedGradients is written out below as `layer_integrated_gradients`
# (its mechanism: the scaled layer outputs are made leaves with `.requires_grad_()`, returned from a forward hook on
# the layer, and torch.autograd.grad is taken with respect to them; 4 Riemann steps, an all-padding-token baseline
# embedding); compute() returns the attributions and the classifier's gradients from a plain training step after.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fairseq_tse = importlib.import_module("1204helpers_fairseq_sentence_encoder")


class SentenceClassifier(nn.Module):
    def __init__(self, encoder, num_classes=3):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.embedding_dim, num_classes)

    def forward(self, tokens, segment_labels):
        _, sentence_rep = self.encoder(tokens, segment_labels=segment_labels, last_state_only=True)
        return self.head(sentence_rep)


def layer_integrated_gradients(forward_fn, layer, layer_input_eval, layer_baseline_eval, target, n_steps=4):
    """Stand-in for captum.attr.LayerIntegratedGradients.attribute (riemann_right, as captum's hook does it)."""
    alphas = [(i + 1) / n_steps for i in range(n_steps)]
    scaled = torch.cat([layer_baseline_eval + a * (layer_input_eval - layer_baseline_eval) for a in alphas])
    scaled = scaled.requires_grad_()

    def layer_forward_hook(module, hook_inputs, hook_output):
        return scaled

    handle = layer.register_forward_hook(layer_forward_hook)
    try:
        output = forward_fn(n_steps)
        selected = output[torch.arange(output.size(0)), target]
        grads = torch.autograd.grad(torch.unbind(selected), scaled)[0]
    finally:
        handle.remove()
    grads = grads.view(n_steps, *layer_input_eval.shape).mean(0)
    return grads * (layer_input_eval - layer_baseline_eval)


def compute():
    torch.manual_seed(0)
    encoder = fairseq_tse.TransformerSentenceEncoder(padding_idx=1, vocab_size=12, embed_scale=2.0)
    model = SentenceClassifier(encoder)
    tokens = torch.tensor([[0, 5, 7, 9, 2, 1], [0, 4, 4, 8, 3, 2]])
    segments = torch.tensor([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]])
    target = torch.tensor([2, 0])

    with torch.no_grad():
        layer_input_eval = encoder.embed_tokens(tokens)
        layer_baseline_eval = encoder.embed_tokens(torch.full_like(tokens, 1))

    def forward_fn(n_steps):
        return model(tokens.repeat(n_steps, 1), segments.repeat(n_steps, 1))

    attributions = layer_integrated_gradients(
        forward_fn, encoder.embed_tokens, layer_input_eval, layer_baseline_eval, target.repeat(4)
    )

    loss = nn.functional.cross_entropy(model(tokens, segments), target)
    loss.backward()
    grads = {"attributions": attributions}
    grads.update({n: p.grad for n, p in model.named_parameters() if p.grad is not None})
    return grads


if __name__ == "__main__":
    compute()
