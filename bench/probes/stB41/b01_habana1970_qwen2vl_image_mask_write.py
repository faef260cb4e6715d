# source: https://github.com/huggingface/optimum-habana/pull/1970
# error: B (the frozen embedding's output is made a leaf that requires grad by an enable_input_require_grads-style
# forward hook; `inputs_embeds[image_mask] = image_embeds` writes into it in place)
import torch
import torch.nn as nn


class TinyVisionTower(nn.Module):
    def __init__(self, patch=6, hidden=8):
        super().__init__()
        self.proj = nn.Linear(patch, hidden)

    def forward(self, pixels):
        return torch.tanh(self.proj(pixels))


class TinyQwen2VLForCausalLM(nn.Module):
    image_token_id = 3

    def __init__(self, vocab=16, hidden=8):
        super().__init__()
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(vocab, hidden)
        self.visual = TinyVisionTower(hidden=hidden)
        self.lm_head = nn.Linear(hidden, vocab)

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, pixel_values):
        inputs_embeds = self.model.embed_tokens(input_ids)
        image_embeds = self.visual(pixel_values)
        image_mask = input_ids == self.image_token_id
        inputs_embeds[image_mask] = image_embeds
        return self.lm_head(inputs_embeds)


def main():
    torch.manual_seed(0)
    model = TinyQwen2VLForCausalLM()
    model.model.requires_grad_(False)  # LoRA/visual-only tuning: the language model is frozen
    model.enable_input_require_grads()  # gradient checkpointing setup
    input_ids = torch.tensor([[1, 3, 3, 5], [3, 2, 4, 3]])
    pixel_values = torch.randn(4, 6)
    loss = model(input_ids, pixel_values).logsumexp(-1).mean()
    loss.backward()
    return [loss.detach(), model.visual.proj.weight.grad]


if __name__ == "__main__":
    main()
