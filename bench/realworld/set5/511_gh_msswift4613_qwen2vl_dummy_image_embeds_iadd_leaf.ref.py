# reference fix for 511: the out-of-place form used by the same file's Qwen2.5-Omni template,
# inputs_embeds = inputs_embeds + image_embeds.mean() * 0.
import torch
import torch.nn as nn


def is_deepspeed_enabled():
    return True


class VisualStandIn(nn.Module):
    def __init__(self, patch_dim=12, hidden=8):
        super().__init__()
        self.proj = nn.Linear(patch_dim, hidden)

    def get_dtype(self):
        return self.proj.weight.dtype

    def forward(self, pixel_values, grid_thw=None):
        return torch.tanh(self.proj(pixel_values))


class TinyQwen2VL(nn.Module):
    def __init__(self, vocab=20, hidden=8):
        super().__init__()
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(vocab, hidden)
        self.visual = VisualStandIn(hidden=hidden)
        self.lm_head = nn.Linear(hidden, vocab)

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.model.embed_tokens.register_forward_hook(make_inputs_require_grads)


class Qwen2VLTemplate:
    version = 'v2'
    is_training = True

    def get_base_model(self, model):
        return model

    def _post_encode(self, model, inputs):
        if not self.is_training:
            return inputs
        input_ids = inputs['input_ids']
        pixel_values = inputs.get('pixel_values')
        pixel_values_videos = inputs.get('pixel_values_videos')

        base_model = self.get_base_model(model)
        if hasattr(base_model.model, 'embed_tokens'):
            inputs_embeds = base_model.model.embed_tokens(input_ids)
        else:
            inputs_embeds = base_model.model.language_model.embed_tokens(input_ids)

        dtype = model.visual.get_dtype() if self.version == 'v2' else model.visual.dtype
        if pixel_values is None and pixel_values_videos is None:  # plain-text
            if is_deepspeed_enabled():
                # processor(images=[Image.new('RGB', (32, 32), (0, 0, 0))]) -> black patches
                media_inputs = {'pixel_values': torch.zeros(4, 12), 'image_grid_thw': torch.tensor([[1, 2, 2]])}
                pixel_values = media_inputs['pixel_values'].type(dtype)
                image_embeds = model.visual(pixel_values, grid_thw=media_inputs['image_grid_thw'])
                inputs_embeds = inputs_embeds + image_embeds.mean() * 0.
        return {'inputs_embeds': inputs_embeds}


def compute():
    torch.manual_seed(0)
    model = TinyQwen2VL()
    model.model.embed_tokens.weight.requires_grad_(False)  # frozen base embedding (LoRA training)
    model.enable_input_require_grads()                     # as done for gradient checkpointing
    template = Qwen2VLTemplate()
    input_ids = torch.randint(0, 20, (2, 5))
    labels = torch.randint(0, 20, (2, 5))
    inputs = template._post_encode(model, {'input_ids': input_ids})
    logits = model.lm_head(inputs['inputs_embeds'])
    loss = nn.functional.cross_entropy(logits.view(-1, 20), labels.view(-1))
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}


if __name__ == "__main__":
    compute()
