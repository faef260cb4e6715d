# esm/model.py and esm/pretrained.py as of the parent of commit 0ae539b ("roberta ratio needs float, zeroing slice
# of Param was tracked by autograd (#6)"): ProteinBertModel._init_submodules_esm1b ends with the ESM-1b token-dropout
# set-up `self.embed_tokens.weight[self.mask_idx].zero_()`, an in-place write into a view of the embedding's
# weight, a leaf that requires grad: building the model fails with "a view of a leaf Variable that requires grad is
# being used in an in-place operation". The fix drops that line and zeroes the row in the loaded state dict instead
# (`model_state["embed_tokens.weight"][alphabet.mask_idx].zero_()` in load_model_and_alphabet_core).
# Stand-ins: the Alphabet is a small namespace (33 tokens, cls 0, padding 1, eos 2, mask 32); the transformer layers
# and the contact head are left out (args.layers = 0); LearnedPositionalEmbedding is nn.Embedding over positions;
# ESM1bLayerNorm is nn.LayerNorm; RobertaLMHead is copied from esm/modules.py (gelu as F.gelu); the checkpoint's
# state-dict key upgrade (encoder prefixes) is left out: `model_data["model"]` already holds the model's keys.
import math
from argparse import Namespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class RobertaLMHead(nn.Module):
    """Head for masked language modeling."""

    def __init__(self, embed_dim, output_dim, weight):
        super().__init__()
        self.dense = nn.Linear(embed_dim, embed_dim)
        self.layer_norm = nn.LayerNorm(embed_dim)
        self.weight = weight
        self.bias = nn.Parameter(torch.zeros(output_dim))

    def forward(self, features):
        x = self.dense(features)
        x = F.gelu(x)
        x = self.layer_norm(x)
        # project back to size of vocabulary with bias
        x = F.linear(x, self.weight) + self.bias
        return x


class ProteinBertModel(nn.Module):
    def __init__(self, args, alphabet):
        super().__init__()
        self.args = args
        self.alphabet_size = len(alphabet)
        self.padding_idx = alphabet.padding_idx
        self.mask_idx = alphabet.mask_idx
        self.cls_idx = alphabet.cls_idx
        self.eos_idx = alphabet.eos_idx
        if self.args.arch == 'roberta_large':
            self.model_version = 'ESM-1b'
            self._init_submodules_esm1b()
        else:
            raise NotImplementedError("ESM-1 is left out of this reduction")

    def _init_submodules_common(self):
        self.embed_tokens = nn.Embedding(
            self.alphabet_size, self.args.embed_dim, padding_idx=self.padding_idx
        )
        self.layers = nn.ModuleList([])

    def _init_submodules_esm1b(self):
        self._init_submodules_common()
        self.embed_scale = 1
        self.embed_positions = nn.Embedding(self.args.max_positions, self.args.embed_dim)
        self.emb_layer_norm_before = nn.LayerNorm(self.args.embed_dim)
        self.emb_layer_norm_after = nn.LayerNorm(self.args.embed_dim)
        self.lm_head = RobertaLMHead(
            embed_dim=self.args.embed_dim,
            output_dim=self.alphabet_size,
            weight=self.embed_tokens.weight
        )
        # token dropout
        self.embed_tokens.weight[self.mask_idx].zero_()

    def forward(self, tokens):
        assert tokens.ndim == 2
        padding_mask = tokens.eq(self.padding_idx)  # B, T

        x = self.embed_scale * self.embed_tokens(tokens)
        positions = torch.arange(tokens.size(1)).unsqueeze(0).expand_as(tokens)
        x = x + self.embed_positions(positions)

        if self.model_version == 'ESM-1b':
            x = self.emb_layer_norm_before(x)
            if padding_mask is not None:
                x = x * (1 - padding_mask.unsqueeze(-1).type_as(x))

        for layer in self.layers:
            x = layer(x)

        if self.model_version == 'ESM-1b':
            x = self.emb_layer_norm_after(x)
            x = self.lm_head(x)
        return {"logits": x}


def load_model_and_alphabet_core(model_data, alphabet):
    model_args = vars(model_data["args"])
    model_state = dict(model_data["model"])
    model = ProteinBertModel(
        Namespace(**model_args), alphabet,
    )
    model.load_state_dict(model_state)
    return model, alphabet
