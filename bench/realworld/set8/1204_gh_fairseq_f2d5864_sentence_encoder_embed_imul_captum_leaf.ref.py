# reference fix for 1204: commit f2d5864b in the library module (1204helpers_fairseq_sentence_encoder_fixed.py): the
# embedding updates written out of place.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fairseq_tse = importlib.import_module("1204helpers_fairseq_sentence_encoder_fixed")


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
