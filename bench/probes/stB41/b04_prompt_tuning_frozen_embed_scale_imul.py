# source: own knowledge (prompt tuning / PEFT with gradient checkpointing on a frozen T5/Gemma-style decoder whose
# forward scales the token embeddings in place; HF's make_inputs_require_grads hook on the input embedding)
# error: B (`x *= self.embed_scale` on the hooked, frozen embedding's output: a leaf that requires grad)
import math

import torch
import torch.nn as nn


class TinyDecoder(nn.Module):
    def __init__(self, vocab=16, d=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.embed_scale = math.sqrt(d)
        self.block = nn.Sequential(nn.Linear(d, 16), nn.GELU(), nn.Linear(16, d))
        self.out = nn.Linear(d, vocab)

    def forward(self, ids, prompt):
        x = self.embed(ids)
        x *= self.embed_scale
        x = torch.cat([prompt.expand(x.size(0), -1, -1), x], dim=1)
        return self.out(x + self.block(x))


def make_inputs_require_grad(module, input, output):
    output.requires_grad_(True)


def main():
    torch.manual_seed(0)
    model = TinyDecoder()
    for p in model.parameters():
        p.requires_grad_(False)
    model.embed.register_forward_hook(make_inputs_require_grad)
    prompt = nn.Parameter(torch.randn(1, 2, 8) * 0.1)
    ids = torch.tensor([[1, 4, 6, 2], [3, 3, 7, 0]])
    loss = model(ids, prompt).logsumexp(-1).mean()
    loss.backward()
    return [loss.detach(), prompt.grad]


if __name__ == "__main__":
    main()
