# source: https://github.com/NVlabs/VILA/pull/199
# pattern: augassign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# VILA _embed(): `text_embeds += torch.sum(dummy_embed) * 0` keeps the vision tower in the graph for text-only
# batches; with the LLM frozen and enable_input_require_grads() the embedding output is a leaf that requires
# grad, so `+=` raises. Small stand-ins for the vision tower, projector and LLM.
from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLLM(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(vocab, d)
        self.model.layer = nn.TransformerEncoderLayer(d, 2, 16, dropout=0.0, batch_first=True)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, inputs_embeds):
        return self.lm_head(self.model.layer(inputs_embeds))


class LlavaMetaModel(nn.Module):
    def __init__(self, d=8, img_feat=12):
        super().__init__()
        self.llm = TinyLLM(d=d)
        self.vision_tower = nn.Linear(img_feat, img_feat)
        self.mm_projector = nn.Sequential(nn.Linear(img_feat, d), nn.GELU(), nn.Linear(d, d))

    def encode_images(self, images):
        return self.mm_projector(self.vision_tower(images))

    def _embed(self, input_ids, media, labels, attention_mask):
        text_embeds = self.llm.model.embed_tokens(input_ids)

        # Extract media embeddings; a text-only batch still runs a dummy image through the tower
        media_embeds = {}
        if "dummy" in media:
            media_embeds["dummy"] = deque(self.encode_images(torch.stack(media["dummy"])))

        # This is a workaround to make sure the dummy embeddings are consumed
        while media_embeds.get("dummy"):
            dummy_embed = media_embeds["dummy"].popleft()
            text_embeds += torch.sum(dummy_embed) * 0

        # Remove padding
        batch_size = labels.shape[0]
        text_embeds = [text_embeds[k][attention_mask[k]] for k in range(batch_size)]
        labels = [labels[k][attention_mask[k]] for k in range(batch_size)]
        return torch.stack(text_embeds), torch.stack(labels)

    def forward(self, input_ids, media, labels, attention_mask):
        inputs_embeds, labels = self._embed(input_ids, media, labels, attention_mask)
        logits = self.llm(inputs_embeds)
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))


def compute():
    torch.manual_seed(0)
    model = LlavaMetaModel()
    # LLM frozen (vision-side tuning), gradient checkpointing prep on the LLM
    for p in model.llm.parameters():
        p.requires_grad_(False)
    model.llm.enable_input_require_grads()
    input_ids = torch.randint(0, 20, (2, 6))
    attention_mask = torch.ones(2, 6, dtype=torch.bool)
    media = {"dummy": [torch.randn(12)]}
    loss = model(input_ids, media, input_ids.clone(), attention_mask)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.requires_grad}


if __name__ == "__main__":
    compute()
