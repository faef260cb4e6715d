# source: https://github.com/2U1/Qwen-VL-Series-Finetune/pull/178
# pattern: view_of_leaf_index_copy
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Qwen-VL-Series-Finetune, src/train/monkey_patch_forward.py: with QLoRA and gradient checkpointing the token
# embeddings are frozen and `enable_input_require_grads` marks their output `requires_grad_(True)` (a leaf that
# requires grad); the patched forward scatters the projected image features into the flattened embeddings,
# `flat = inputs_embeds.view(-1, d); flat.index_copy_(0, row_idx, img)`: "a view of a leaf Variable that requires
# grad is being used in an in-place operation". PR #178 (merged): `flat = flat.index_copy(0, row_idx, img)`.
# Stand-ins: vocabulary 11, width 6, a linear "merger" for the vision features, a linear LM head.
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
        flat.index_copy_(0, row_idx, img)
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
