# Written anew at small size after chaofengc/IQA-PyTorch (pyiqa) at the parent of commit a323503 ("fix: fix inplace
# operation in clipscore", August 2023): pyiqa/archs/clipscore_arch.py (CLIPScore), added a few commits earlier.
# The culprit, as in CLIPScore.forward: the CLIP embeddings are L2-normalised in place,
# `img_features /= img_features.norm(dim=-1, keepdim=True)` (and the same for `text_features`). The vector norm's
# backward saves its input, so a gradient of the score with respect to the image (pyiqa's metrics are also used
# as losses) fails with "one of the variables needed for gradient computation has been modified by an inplace
# operation".
# Stand-ins: OpenAI's `clip` package is replaced by TinyCLIP below (a patch-embedding image tower and a bag-of-
# tokens text tower, each ending in a projection matmul as CLIP's encode_image / encode_text do) and a character-
# hash `tokenize`; torchvision's resize (bicubic) / center_crop / normalize become F.interpolate, slicing and
# (x - mean) / std with pyiqa's OPENAI_CLIP_MEAN / OPENAI_CLIP_STD; no ARCH_REGISTRY.
import torch
import torch.nn as nn
import torch.nn.functional as F

OPENAI_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


def tokenize(texts, context_length=16, vocab=97):
    out = torch.zeros(len(texts), context_length, dtype=torch.long)
    for i, text in enumerate(texts):
        ids = [1 + (ord(c) % (vocab - 1)) for c in text][:context_length]
        out[i, :len(ids)] = torch.tensor(ids)
    return out


class TinyVisual(nn.Module):
    def __init__(self, input_resolution=16, patch=4, width=24, embed_dim=16):
        super().__init__()
        self.input_resolution = input_resolution
        self.conv1 = nn.Conv2d(3, width, kernel_size=patch, stride=patch, bias=False)
        self.ln_post = nn.LayerNorm(width)
        self.proj = nn.Parameter(torch.randn(width, embed_dim) * width ** -0.5)

    def forward(self, x):
        x = self.conv1(x).flatten(2).mean(-1)
        x = self.ln_post(x)
        return x @ self.proj


class TinyCLIP(nn.Module):
    def __init__(self, vocab=97, width=24, embed_dim=16):
        super().__init__()
        self.visual = TinyVisual(embed_dim=embed_dim)
        self.token_embedding = nn.Embedding(vocab, width)
        self.ln_final = nn.LayerNorm(width)
        self.text_projection = nn.Parameter(torch.randn(width, embed_dim) * width ** -0.5)

    def encode_image(self, image):
        return self.visual(image)

    def encode_text(self, text):
        x = self.ln_final(self.token_embedding(text).mean(1))
        return x @ self.text_projection


class CLIPScore(nn.Module):
    def __init__(self, backbone='ViT-B/32') -> None:
        super().__init__()
        self.clip_model = TinyCLIP()
        self.prefix = 'A photo depicts'
        self.w = 2.5

    def preprocess(self, x):
        size = self.clip_model.visual.input_resolution
        x = F.interpolate(x, size=(size, size), mode='bicubic', align_corners=False)
        top = (x.shape[-2] - size) // 2
        left = (x.shape[-1] - size) // 2
        x = x[..., top:top + size, left:left + size]
        mean = torch.tensor(OPENAI_CLIP_MEAN).view(1, 3, 1, 1)
        std = torch.tensor(OPENAI_CLIP_STD).view(1, 3, 1, 1)
        return (x - mean) / std

    def forward(self, img, caption_list=None):
        assert caption_list is not None, 'caption_list is None'
        text = tokenize([self.prefix + ' ' + caption for caption in caption_list]).to(img.device)

        img_features = self.clip_model.encode_image(self.preprocess(img))
        text_features = self.clip_model.encode_text(text)
        img_features /= img_features.norm(dim=-1, keepdim=True)
        text_features /= text_features.norm(dim=-1, keepdim=True)
        score = self.w * torch.relu((img_features * text_features).sum(dim=-1))
        return score
