# source: https://github.com/chaofengc/IQA-PyTorch/commit/a3235032a76412bfba4588f9d9c619ea59675a65
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# IQA-PyTorch (pyiqa, image quality metrics usable as losses), pyiqa/archs/clipscore_arch.py: CLIPScore.forward
# L2-normalises the CLIP image and caption embeddings in place,
# `img_features /= img_features.norm(dim=-1, keepdim=True)` (and `text_features` alike). The norm's backward
# saved the embedding, so differentiating the score (e.g. optimising or training an image generator against it)
# fails with "one of the variables needed for gradient computation has been modified by an inplace operation".
# Commit a323503 "fix: fix inplace operation in clipscore" writes
# `img_features = img_features / img_features.norm(dim=-1, keepdim=True)` (and the same for the text).
# The library module is 2606helpers_pyiqa_clipscore.py (ref: ..._fixed.py); its header names the stand-ins (the
# CLIP model, its tokenizer, torchvision's transforms).
# The program (stand-in for a user's use as a loss): a small generator (linear layer to a 3 x 20 x 20 image,
# sigmoid) makes two images from noise; CLIPScore with two captions; loss = -mean score; backward. compute()
# returns the generator's gradients and the scores.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cs = importlib.import_module("2606helpers_pyiqa_clipscore")


def compute():
    torch.manual_seed(0)
    metric = cs.CLIPScore()
    generator = torch.nn.Linear(8, 3 * 20 * 20)
    z = torch.randn(2, 8)
    img = torch.sigmoid(generator(z)).view(2, 3, 20, 20)
    score = metric(img, caption_list=["a red square on grass", "two dogs"])
    loss = -score.mean()
    loss.backward()
    return {"generator.weight.grad": generator.weight.grad, "generator.bias.grad": generator.bias.grad,
            "score": score.detach()}


if __name__ == "__main__":
    compute()
