"""BLIP text and GIT embeddings (transformers 5.24.0): `embeddings = inputs_embeds` (or the word
embedding's output), then `embeddings += position_embeddings` (blip/modeling_blip_text.py:86,
git/modeling_git.py:110) writes into the caller's tensor. No op of the module saved it: what can
raise is PyTorch's leaf check, when that tensor is a leaf that requires grad.

Path: the embeddings module on `inputs_embeds` that requires grad (a leaf, as a caller optimising
the input embeddings passes it), grad on, then backward. Control: `inputs_embeds` from an nn.Embedding
(not a leaf, nothing saved it): no error. Context: ordinary training from input_ids (no error); the
adapter fine-tuning set-up, `model.enable_input_require_grads()` with frozen weights (what PEFT does
for gradient checkpointing), from input_ids: the hook makes the word embedding's output a leaf that
requires grad, and the same `+=` raises.
Run: /work/venvs/real/bin/python bench/hazard_checks/text_embeddings_inputs_embeds.py
"""

import torch
from _check import attempt, expect_line
from transformers import BlipTextConfig, GitConfig, GitModel
from transformers.models.blip.modeling_blip_text import BlipTextEmbeddings, BlipTextModel
from transformers.models.git.modeling_git import GitEmbeddings

SMALL = dict(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
             max_position_embeddings=16, pad_token_id=0, bos_token_id=None, eos_token_id=None)


def blip_model():
    config = BlipTextConfig(**SMALL, encoder_hidden_size=16, sep_token_id=None)
    return BlipTextModel(config, add_pooling_layer=False)


def git_model():
    config = GitConfig(**SMALL, vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                                   num_attention_heads=2, image_size=8, patch_size=4))
    return GitModel(config)


CASES = [
    ("transformers/models/blip/modeling_blip_text.py:86:IPF101", BlipTextEmbeddings, 86, blip_model),
    ("transformers/models/git/modeling_git.py:110:IPF101", GitEmbeddings, 110, git_model),
]

for finding, embeddings_class, line, make_model in CASES:
    expect_line(embeddings_class.forward, line, "embeddings += position_embeddings")
    torch.manual_seed(0)
    model = make_model()
    module = model.embeddings
    assert isinstance(module, embeddings_class)
    ids = torch.randint(1, 32, (1, 5))

    def leaf_inputs_embeds():
        module(inputs_embeds=torch.randn(1, 5, 16, requires_grad=True)).sum().backward()

    def embedding_output():
        module(inputs_embeds=module.word_embeddings(ids)).sum().backward()

    def training_from_ids():
        model(input_ids=ids).last_hidden_state.sum().backward()

    def adapter_set_up():
        tuned = make_model()
        tuned.requires_grad_(False)
        tuned.enable_input_require_grads()
        tuned(input_ids=ids).last_hidden_state.sum().backward()

    attempt(finding, "path", "inputs_embeds a leaf that requires grad, grad on, backward", leaf_inputs_embeds)
    attempt(finding, "control", "inputs_embeds the output of an nn.Embedding (nothing saved it), backward",
            embedding_output)
    attempt(finding, "context", "ordinary training from input_ids, backward", training_from_ids)
    attempt(finding, "context", "enable_input_require_grads() with frozen weights (PEFT's set-up), from input_ids, "
            "backward", adapter_set_up)
