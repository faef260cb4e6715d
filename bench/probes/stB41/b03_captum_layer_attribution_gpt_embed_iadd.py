# source: own knowledge (captum LayerIntegratedGradients/LayerGradientXActivation on a GPT-2 style token
# embedding: the attribution's forward hook returns its own leaf that requires grad in place of the layer's output)
# error: B (`h += self.wpe(pos)` writes into the hook's replacement, a leaf that requires grad)
import torch
import torch.nn as nn


class TinyGPT(nn.Module):
    def __init__(self, vocab=16, d=8, n_pos=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n_pos, d)
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, 2)

    def forward(self, ids):
        pos = torch.arange(ids.size(1))
        h = self.wte(ids)
        h += self.wpe(pos)
        return self.head(self.ln_f(h).mean(1))


def gradient_x_activation(model, layer, ids, target):
    saved = {}

    def replace_output(module, inputs, output):
        leaf = output.detach().requires_grad_()
        saved["leaf"] = leaf
        return leaf

    handle = layer.register_forward_hook(replace_output)
    try:
        scores = model(ids)[torch.arange(ids.size(0)), target]
        grads = torch.autograd.grad(scores.sum(), saved["leaf"])[0]
    finally:
        handle.remove()
    return grads * saved["leaf"].detach()


def main():
    torch.manual_seed(0)
    model = TinyGPT()
    ids = torch.tensor([[1, 4, 6, 2], [3, 3, 7, 0]])
    return gradient_x_activation(model, model.wte, ids, torch.tensor([0, 1]))


if __name__ == "__main__":
    main()
