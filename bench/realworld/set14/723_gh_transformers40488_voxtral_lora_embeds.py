# source: https://github.com/huggingface/transformers/issues/40488
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# transformers issue #40488 "Voxtral model fails with LoRA due to in-place operation error" (transformers 4.55.4):
# VoxtralForConditionalGeneration.forward merges the audio embeddings with
# `inputs_embeds[audio_token_mask] = audio_embeds`. With LoRA the text embedding layer is frozen, and the training
# setup's input-grad hook (`enable_input_require_grads`, used with gradient checkpointing / peft) makes the
# embedding output a leaf that requires grad, so the index assignment raises "a leaf Variable that requires grad
# is being used in an in-place operation".
# Fix (PR #40671, merged, fixes #40488; current modeling_voxtral.py): merge out of place,
# `inputs_embeds = inputs_embeds.masked_scatter(audio_token_mask.unsqueeze(-1), audio_embeds)`.
# Stand-ins: the Whisper-style audio tower is one Linear+GELU producing `last_hidden_state`; the language model is
# an embedding + one LoRA-adapted linear block + LM head (frozen base weights, trainable lora_A/lora_B, as peft
# leaves them); config is a namespace; the hook is transformers' `enable_input_require_grads` body.
import types

import torch
import torch.nn as nn
import torch.nn.functional as F


class LoraLinear(nn.Module):
    # stand-in for a peft LoRA-wrapped nn.Linear
    def __init__(self, in_f, out_f, r=2, scaling=2.0):
        super().__init__()
        self.base_layer = nn.Linear(in_f, out_f)
        self.base_layer.requires_grad_(False)
        self.lora_A = nn.Linear(in_f, r, bias=False)
        self.lora_B = nn.Linear(r, out_f, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)
        self.scaling = scaling

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(x)) * self.scaling


class TinyLanguageModel(nn.Module):
    # stand-in for the Llama language model of Voxtral
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.embed_tokens.requires_grad_(False)
        self.mlp = LoraLinear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.lm_head.requires_grad_(False)

    def get_input_embeddings(self):
        return self.embed_tokens

    def forward(self, inputs_embeds, labels):
        h = inputs_embeds + torch.tanh(self.mlp(inputs_embeds))
        logits = self.lm_head(h)
        return types.SimpleNamespace(loss=F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1)),
                                     logits=logits)


class AudioTower(nn.Module):
    # stand-in for VoxtralEncoder
    def __init__(self, n_mels, d):
        super().__init__()
        self.proj = nn.Linear(n_mels, d)

    def forward(self, input_features):
        return types.SimpleNamespace(last_hidden_state=F.gelu(self.proj(input_features.transpose(1, 2))))


class VoxtralMultiModalProjector(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.linear_1 = nn.Linear(config.audio_config.intermediate_size, config.text_config.hidden_size, bias=False)
        self.act = nn.GELU()
        self.linear_2 = nn.Linear(config.text_config.hidden_size, config.text_config.hidden_size, bias=False)

    def forward(self, audio_features):
        hidden_states = self.linear_1(audio_features)
        hidden_states = self.act(hidden_states)
        hidden_states = self.linear_2(hidden_states)
        return hidden_states


class VoxtralForConditionalGeneration(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.audio_tower = AudioTower(config.audio_config.num_mel_bins, config.audio_config.hidden_size)
        self.language_model = TinyLanguageModel(config.text_config.vocab_size, config.text_config.hidden_size)
        self.multi_modal_projector = VoxtralMultiModalProjector(config)

    def get_input_embeddings(self):
        return self.language_model.get_input_embeddings()

    def enable_input_require_grads(self):
        # transformers PreTrainedModel.enable_input_require_grads
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def get_audio_embeds(self, input_features):
        audio_outputs = self.audio_tower(input_features)
        audio_hidden_states = audio_outputs.last_hidden_state
        audio_hidden_states = audio_hidden_states.reshape(-1, self.config.audio_config.intermediate_size)
        audio_embeds = self.multi_modal_projector(audio_hidden_states)
        return audio_embeds

    def forward(self, input_ids=None, input_features=None, inputs_embeds=None, labels=None):
        if inputs_embeds is None:
            inputs_embeds = self.get_input_embeddings()(input_ids)

        if input_features is not None:
            audio_embeds = self.get_audio_embeds(input_features)

            # replace text-audio token placeholders with audio embeddings
            audio_token_mask = input_ids == self.config.audio_token_id
            inputs_embeds[audio_token_mask] = audio_embeds

        return self.language_model(inputs_embeds=inputs_embeds, labels=labels)


def compute():
    torch.manual_seed(0)
    config = types.SimpleNamespace(
        audio_token_id=3,
        audio_config=types.SimpleNamespace(num_mel_bins=5, hidden_size=4, intermediate_size=8),
        text_config=types.SimpleNamespace(vocab_size=11, hidden_size=6),
    )
    model = VoxtralForConditionalGeneration(config)
    model.enable_input_require_grads()
    # freeze everything but the LoRA adapters (as get_peft_model does)
    for n, p in model.named_parameters():
        p.requires_grad_("lora_" in n)

    # 2 samples x 7 tokens; 2 audio placeholder tokens per sample (4 audio frames of 4 dims -> 2 rows of 8)
    input_ids = torch.tensor([[1, 3, 3, 5, 6, 2, 4], [7, 8, 3, 3, 9, 10, 1]])
    input_features = torch.randn(2, 5, 4)
    labels = torch.randint(0, 11, (2, 7))
    out = model(input_ids=input_ids, input_features=input_features, labels=labels)
    out.loss.backward()
    return {
        "loss": out.loss.detach(),
        "grad_lora_A": model.language_model.mlp.lora_A.weight.grad.detach().clone(),
        "grad_lora_B": model.language_model.mlp.lora_B.weight.grad.detach().clone(),
        "logits": out.logits.detach().clone(),
    }
