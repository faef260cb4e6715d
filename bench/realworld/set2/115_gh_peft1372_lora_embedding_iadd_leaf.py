# source: https://github.com/huggingface/peft/pull/1372
# pattern: augassign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# peft lora.Embedding: `result = self.base_layer(x)` then `result += (after_A @ embedding_B) * scaling`. With
# enable_input_require_grads() (hook: output.requires_grad_(True) on the frozen embedding) `result` is a
# leaf that requires grad, so the in-place add raises. Mini re-implementation of the wrapper.
import torch
import torch.nn as nn
import torch.nn.functional as F


class LoraEmbedding(nn.Module):
    def __init__(self, base_layer, adapter_name="default", r=4, lora_alpha=8):
        super().__init__()
        self.base_layer = base_layer
        self.active_adapters = [adapter_name]
        self.lora_embedding_A = nn.ParameterDict(
            {adapter_name: nn.Parameter(torch.zeros(r, base_layer.num_embeddings))})
        self.lora_embedding_B = nn.ParameterDict(
            {adapter_name: nn.Parameter(torch.randn(base_layer.embedding_dim, r))})
        self.scaling = {adapter_name: lora_alpha / r}

    def _embed(self, input, weight):
        base_layer = self.base_layer
        return F.embedding(input, weight, padding_idx=base_layer.padding_idx, max_norm=base_layer.max_norm,
                           norm_type=base_layer.norm_type, scale_grad_by_freq=base_layer.scale_grad_by_freq,
                           sparse=base_layer.sparse)

    def forward(self, x, *args, **kwargs):
        result = self.base_layer(x, *args, **kwargs)
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_embedding_A:
                continue
            embedding_A = self.lora_embedding_A[active_adapter].T
            embedding_B = self.lora_embedding_B[active_adapter].T
            scaling = self.scaling[active_adapter]
            after_A = self._embed(x, embedding_A)
            result += (after_A @ embedding_B) * scaling
        return result


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layer = nn.TransformerEncoderLayer(d, 2, 16, dropout=0.0, batch_first=True)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def get_input_embeddings(self):
        return self.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids):
        h = self.layer(self.embed_tokens(input_ids))
        return self.lm_head(h)


def compute():
    torch.manual_seed(0)
    model = TinyCausalLM()
    # prepare_model_for_kbit_training-style setup: freeze the base model, make inputs require grad
    for p in model.parameters():
        p.requires_grad_(False)
    model.enable_input_require_grads()
    # get_peft_model(..., target_modules=["embed_tokens"])
    model.embed_tokens = LoraEmbedding(model.embed_tokens)
    input_ids = torch.randint(0, 20, (2, 6))
    logits = model(input_ids)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), input_ids[:, 1:].reshape(-1))
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.requires_grad}


if __name__ == "__main__":
    compute()
