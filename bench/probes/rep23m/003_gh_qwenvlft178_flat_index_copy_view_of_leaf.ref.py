# reference: PR #178, `flat = flat.index_copy(0, row_idx, img)`
import torch
import torch.nn as nn


class TinyVLM(nn.Module):
    def __init__(self, vocab=11, d=6):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.embed_tokens.weight.requires_grad_(False)
        self.merger = nn.Linear(4, d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, input_ids, pixel_feats, image_token=3):
        inputs_embeds = self.embed_tokens(input_ids)
        inputs_embeds.requires_grad_(True)  # enable_input_require_grads' forward hook
        img = self.merger(pixel_feats)
        b, s, d = inputs_embeds.shape
        flat = inputs_embeds.view(-1, d)
        row_idx = (input_ids.view(-1) == image_token).nonzero().squeeze(-1)
        flat = flat.index_copy(0, row_idx, img)
        return self.lm_head(torch.tanh(flat.view(b, s, d)))


def compute():
    torch.manual_seed(0)
    model = TinyVLM()
    input_ids = torch.tensor([[1, 3, 3, 5, 2], [4, 3, 6, 7, 3]])
    pixel_feats = torch.randn(4, 4)
    logits = model(input_ids, pixel_feats)
    loss = nn.functional.cross_entropy(logits.view(-1, 11), torch.tensor([3, 3, 5, 2, 0, 3, 6, 7, 3, 1]))
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.requires_grad}


if __name__ == "__main__":
    compute()
