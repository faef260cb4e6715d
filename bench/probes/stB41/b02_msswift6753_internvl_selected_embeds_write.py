# source: https://github.com/modelscope/ms-swift/issues/6753
# error: B (InternVL-style chat model: the frozen language model's input embeddings get a forward hook that makes
# their output require grad; `input_embeds[selected] = vit_embeds` writes into that leaf; the reporter needed
# `inputs_embeds = inputs_embeds.clone()`)
import torch
import torch.nn as nn


class TinyLanguageModel(nn.Module):
    def __init__(self, vocab=16, hidden=8):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.output = nn.Linear(hidden, vocab)

    def get_input_embeddings(self):
        return self.tok_embeddings

    def forward(self, inputs_embeds):
        return self.output(self.norm(inputs_embeds))


class TinyInternVLChat(nn.Module):
    img_context_token_id = 2

    def __init__(self, hidden=8, vit_dim=10):
        super().__init__()
        self.language_model = TinyLanguageModel(hidden=hidden)
        self.mlp1 = nn.Sequential(nn.LayerNorm(vit_dim), nn.Linear(vit_dim, hidden))

    def forward(self, pixel_values, input_ids):
        input_embeds = self.language_model.get_input_embeddings()(input_ids)
        vit_embeds = self.mlp1(pixel_values)
        B, N, C = input_embeds.shape
        input_embeds = input_embeds.reshape(B * N, C)
        selected = input_ids.reshape(B * N) == self.img_context_token_id
        input_embeds[selected] = vit_embeds.reshape(-1, C)
        return self.language_model(input_embeds.reshape(B, N, C))


def make_inputs_require_grad(module, input, output):
    output.requires_grad_(True)


def main():
    torch.manual_seed(0)
    model = TinyInternVLChat()
    for p in model.language_model.parameters():
        p.requires_grad = False
    model.language_model.get_input_embeddings().register_forward_hook(make_inputs_require_grad)
    input_ids = torch.tensor([[1, 2, 2, 4], [2, 5, 6, 2]])
    pixel_values = torch.randn(4, 10)
    loss = model(pixel_values, input_ids).logsumexp(-1).mean()
    loss.backward()
    return [loss.detach(), model.mlp1[1].weight.grad]


if __name__ == "__main__":
    main()
