# source: https://github.com/caoyunkang/AdaCLIP/issues/2
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# AdaCLIP (zero-shot anomaly detection on CLIP, method/adaclip.py). AdaCLIP.proj_visual_tokens L2-normalises the
# projected patch and class tokens in place: `proj_patch_tokens[layer] /= proj_patch_tokens[layer].norm(dim=-1,
# keepdim=True)` and `proj_cls_tokens /= proj_cls_tokens.norm(dim=-1, keepdim=True)`. The norm keeps its input for
# backward, and the in-place division then overwrites that input, so training fails ("[torch.cuda.HalfTensor
# [1, 768]], which is output 0 of DivBackward0, is at version 1; expected version 0"). The maintainer suggested an
# older torch; PR #46 ("some inplace operations were causing the following error ... solved by making the inplace
# operations Out-of-place") is the fix, and the ref divides out of place.
# The frozen CLIP image/text encoders are small stand-ins (a fixed random patch embedding and a fixed text table,
# both under no_grad as in the repository when the prompting branches are off); ProjectLayer, proj_visual_tokens
# and visual_text_similarity (no HSF, aggregation=False) are the repository's. The text path keeps its own
# in-place normalisation (`class_embeddings /= ...`) but runs under torch.no_grad(), where it is harmless. The
# focal/dice losses are replaced by binary cross-entropy on the same outputs; np.sqrt is math.sqrt (torch-only env).
import math
import torch
from torch import nn
from torch.nn import functional as F


class ProjectLayer(nn.Module):
    def __init__(self, input_dim, output_dim, num_replicas, stack=False, is_array=True):
        super(ProjectLayer, self).__init__()

        self.head = nn.ModuleList([nn.Linear(input_dim, output_dim) for _ in range(num_replicas)])
        self.num_replicas = num_replicas
        self.stack = stack
        self.is_array = is_array

    def forward(self, tokens):
        out_tokens = []
        for i in range(self.num_replicas):
            if self.is_array:
                temp = self.head[i](tokens[i][:, 1:, :]) # for ViT, we exclude the class token and only extract patch tokens here.
            else:
                temp = self.head[i](tokens)

            out_tokens.append(temp)

        if self.stack:
            out_tokens = torch.stack(out_tokens, dim=1)

        return out_tokens


class FrozenCLIPStandIn(nn.Module):
    """Stand-in for the frozen CLIP: patch tokens from a few 'layers' and pooled features, text prompt features."""

    def __init__(self, visual_channel, text_channel, n_layers, patch=4, n_prompts=6):
        super().__init__()
        self.patch_embeds = nn.ModuleList([nn.Conv2d(3, visual_channel, patch, stride=patch) for _ in range(n_layers)])
        self.pool_proj = nn.Linear(visual_channel, text_channel)
        self.text_table = nn.Parameter(torch.randn(2, n_prompts, text_channel))
        for p in self.parameters():
            p.requires_grad = False

    def encode_image(self, image):
        patch_tokens = []
        for embed in self.patch_embeds:
            t = embed(image).flatten(2).transpose(1, 2)
            t = torch.cat([t.mean(dim=1, keepdim=True), t], dim=1)  # class token first, as in ViT
            patch_tokens.append(t)
        image_features = self.pool_proj(patch_tokens[-1][:, 0, :])
        return image_features, patch_tokens

    def encode_text(self, state):
        return self.text_table[state]


class AdaCLIP(nn.Module):
    def __init__(self, freeze_clip, text_channel, visual_channel, output_layers, image_size):
        super(AdaCLIP, self).__init__()
        self.freeze_clip = freeze_clip
        self.output_layers = output_layers
        self.image_size = image_size

        self.patch_token_layer = ProjectLayer(
            visual_channel,
            text_channel,
            len(output_layers), stack=False, is_array=True
        )

        self.cls_token_layer = ProjectLayer(
            text_channel,
            text_channel,
            1, stack=False, is_array=False
        )

    def encode_text_features(self):
        text_features = []
        for i in range(2):
            class_embeddings = self.freeze_clip.encode_text(i)

            class_embeddings /= class_embeddings.norm(dim=-1, keepdim=True)
            class_embedding = class_embeddings.mean(dim=0)
            class_embedding /= class_embedding.norm()
            text_features.append(class_embedding)

        text_features = torch.stack(text_features, dim=1)
        return text_features

    def proj_visual_tokens(self, image_features, patch_tokens):

        # for patch tokens
        proj_patch_tokens = self.patch_token_layer(patch_tokens)
        for layer in range(len(proj_patch_tokens)):
            proj_patch_tokens[layer] /= proj_patch_tokens[layer].norm(dim=-1, keepdim=True)

        # for cls tokens
        proj_cls_tokens = self.cls_token_layer(image_features)[0]
        proj_cls_tokens /= proj_cls_tokens.norm(dim=-1, keepdim=True)

        return proj_cls_tokens, proj_patch_tokens

    def visual_text_similarity(self, image_feature, patch_token, text_feature, aggregation):
        anomaly_maps = []

        for layer in range(len(patch_token)):
            anomaly_map = (100.0 * patch_token[layer] @ text_feature)
            anomaly_maps.append(anomaly_map)

        cur_image_feature = image_feature

        anomaly_score = (100.0 * cur_image_feature.unsqueeze(1) @ text_feature)
        anomaly_score = anomaly_score.squeeze(1)
        anomaly_score = torch.softmax(anomaly_score, dim=1)

        for i in range(len(anomaly_maps)):
            B, L, C = anomaly_maps[i].shape
            H = int(math.sqrt(L))
            anomaly_maps[i] = anomaly_maps[i].permute(0, 2, 1).view(B, 2, H, H)
            anomaly_maps[i] = F.interpolate(anomaly_maps[i], size=self.image_size, mode='bilinear', align_corners=True)

        for i in range(len(anomaly_maps)):
            anomaly_maps[i] = torch.softmax(anomaly_maps[i], dim=1)
        return anomaly_maps, anomaly_score

    def forward(self, image):
        with torch.no_grad():
            image_features, patch_tokens = self.freeze_clip.encode_image(image)
            text_features = self.encode_text_features()
        proj_cls_tokens, proj_patch_tokens = self.proj_visual_tokens(image_features, patch_tokens)
        return self.visual_text_similarity(proj_cls_tokens, proj_patch_tokens, text_features, aggregation=False)


def compute():
    torch.manual_seed(0)
    clip = FrozenCLIPStandIn(visual_channel=12, text_channel=8, n_layers=2)
    model = AdaCLIP(clip, text_channel=8, visual_channel=12, output_layers=[6, 12], image_size=16)
    image = torch.randn(2, 3, 16, 16)
    gt = (torch.rand(2, 16, 16) > 0.7).float()
    is_anomaly = torch.tensor([1.0, 0.0])
    anomaly_maps, anomaly_score = model(image)
    loss = F.binary_cross_entropy(anomaly_score[:, 1], is_anomaly)
    for am in anomaly_maps:
        loss = loss + F.binary_cross_entropy(am[:, 1, :, :], gt)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.requires_grad}


if __name__ == "__main__":
    compute()
