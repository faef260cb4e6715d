# source: https://github.com/PacktPublishing/Modern-Computer-Vision-with-PyTorch/issues/36
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Modern Computer Vision with PyTorch, Chapter11/neural_style_transfer.ipynb: the optimised image `opt_img` is a leaf
# that requires grad (LBFGS optimises it); after the optimisation the notebook shows it with
# `out_img = postprocess(opt_img[0]).permute(1,2,0)`, where postprocess starts with `T.Lambda(lambda x: x.mul_(1./255))`,
# an in-place product on `opt_img[0]`, a view of that leaf ("RuntimeError: a view of a leaf Variable that requires
# grad is being used in an in-place operation", issue #36). The maintainer's fix, commit 22fdc64 "Fix #36": the
# display line runs under `with torch.no_grad():`.
# Stand-ins: torchvision's Compose / Lambda / Normalize are written out (Normalize out of place, as torchvision's
# default); vgg19(pretrained=True).features is a 6-layer random conv/ReLU/pool stack with style layers [0, 2] and
# content layer [4]; np.argsort is written with sorted(); the images are random 1 x 3 x 16 x 16 tensors; 2 outer LBFGS steps instead of 500; compute()
# returns the displayed image and the optimised image.

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class Normalize:
    def __init__(self, mean, std):
        self.mean = torch.tensor(mean)[:, None, None]
        self.std = torch.tensor(std)[:, None, None]

    def __call__(self, tensor):
        return tensor.sub(self.mean).div(self.std)


postprocess = Compose([
    Lambda(lambda x: x.mul_(1./255)),
    Normalize(mean=[-0.485/0.229, -0.456/0.224, -0.406/0.225], std=[1/0.229, 1/0.224, 1/0.225]),
])


class GramMatrix(nn.Module):
    def forward(self, input):
        b, c, h, w = input.size()
        feat = input.view(b, c, h*w)
        G = feat@feat.transpose(1, 2)
        G.div_(h*w)
        return G


class GramMSELoss(nn.Module):
    def forward(self, input, target):
        out = F.mse_loss(GramMatrix()(input), target)
        return(out)


class vgg19_modified(nn.Module):
    def __init__(self):
        super().__init__()
        features = [nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                    nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1)]  # stand-in for vgg19(pretrained=True).features
        self.features = nn.ModuleList(features).eval()

    def forward(self, x, layers=[]):
        order = sorted(range(len(layers)), key=lambda i: layers[i])  # np.argsort(layers) (numpy not installed)
        _results, results = [], []
        for ix, model in enumerate(self.features):
            x = model(x)
            if ix in layers:
                _results.append(x)
        for o in order:
            results.append(_results[o])
        return results if layers is not [] else x


def compute():
    torch.manual_seed(0)
    vgg = vgg19_modified()
    for p in vgg.parameters():
        p.requires_grad_(False)
    style_image, content_image = torch.rand(1, 3, 16, 16) * 255, torch.rand(1, 3, 16, 16) * 255
    opt_img = content_image.data.clone()
    opt_img.requires_grad = True
    style_layers = [0, 2]
    content_layers = [4]
    loss_layers = style_layers + content_layers
    loss_fns = [GramMSELoss()] * len(style_layers) + [nn.MSELoss()] * len(content_layers)
    style_weights = [1000/n**2 for n in [8, 8]]
    content_weights = [1]
    weights = style_weights + content_weights
    style_targets = [GramMatrix()(A).detach() for A in vgg(style_image, style_layers)]
    content_targets = [A.detach() for A in vgg(content_image, content_layers)]
    targets = style_targets + content_targets
    max_iters = 2
    optimizer = optim.LBFGS([opt_img], max_iter=3)
    iters = 0
    while iters < max_iters:
        def closure():
            optimizer.zero_grad()
            out = vgg(opt_img, loss_layers)
            layer_losses = [weights[a] * loss_fns[a](A, targets[a]) for a, A in enumerate(out)]
            loss = sum(layer_losses)
            loss.backward()
            return loss
        optimizer.step(closure)
        iters += 1
    out_img = postprocess(opt_img[0]).permute(1, 2, 0)
    return {"out_img": out_img, "opt_img": opt_img.detach()}


if __name__ == "__main__":
    compute()
