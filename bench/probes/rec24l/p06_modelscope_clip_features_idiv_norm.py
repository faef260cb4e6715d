# source: https://github.com/modelscope/modelscope/issues/481
# error: A
# The CLIP forward normalises image and text features with /= their norm; the norm saved
# the features (output of a division) for its backward.
import torch
import torch.nn as nn


class CLIP(nn.Module):
    def __init__(self, dim=8, embed_dim=4):
        super().__init__()
        self.visual = nn.Linear(dim, dim)
        self.bert = nn.Linear(dim, dim)
        self.visual_proj = nn.Parameter(torch.randn(dim, embed_dim))
        self.text_projection = nn.Parameter(torch.randn(dim, embed_dim))
        self.logit_scale = nn.Parameter(torch.ones([]))

    def encode_image(self, image):
        return self.visual(image) @ self.visual_proj

    def encode_text(self, text):
        x = self.bert(text)
        return x @ self.text_projection / 2.0

    def forward(self, image, text):
        image_features = self.encode_image(image)
        text_features = self.encode_text(text)
        image_features /= image_features.norm(dim=-1, keepdim=True)
        text_features /= text_features.norm(dim=-1, keepdim=True)
        return image_features, text_features, self.logit_scale.exp()


def compute():
    torch.manual_seed(0)
    model = CLIP()
    img, txt, scale = model(torch.randn(3, 8), torch.randn(3, 8))
    logits = scale * img @ txt.t()
    loss = nn.functional.cross_entropy(logits, torch.arange(3))
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
