# Reduced copy of modelopt/torch/speculative/plugins/transformers.py (NVIDIA Model-Optimizer, April 2026) with
# PR #1104 applied for case 1005: HFEagleModel's training forward with `eagle_mix_hidden_states` (the EAGLE-3 drafter is fed
# its own output hidden states at random positions over the training-time-test steps), _prepare_eagle_inputs and
# _eagle_loss. Stand-ins: the frozen base LLM is an embedding + two linear "layers" returning the auxiliary hidden
# states and logits; the EAGLE module is fc + one drafter layer (RMSNorm of the hidden states, concatenated with the
# input embeddings, a linear and a residual) + its own lm_head; no attention mask, cache, LoRA, CP, nvtx ranges,
# parallel draft heads (parallel_draft_step = 1) or draft-vocabulary mapping.
import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.eps))


class EagleModule(nn.Module):
    def __init__(self, hidden, vocab):
        super().__init__()
        self.fc = nn.Linear(3 * hidden, hidden, bias=False)
        self.hidden_norm = RMSNorm(hidden)
        self.input_layernorm = RMSNorm(hidden)
        self.proj = nn.Linear(2 * hidden, hidden)
        self.norm = RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, hidden_states, inputs_embeds):
        residual = hidden_states
        x = torch.cat((self.input_layernorm(inputs_embeds), self.hidden_norm(hidden_states)), dim=-1)
        prenorm = residual + torch.tanh(self.proj(x))
        return self.norm(prenorm), prenorm


class BaseModel(nn.Module):
    def __init__(self, hidden, vocab):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(2)])
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        aux = [h]
        for layer in self.layers:
            h = h + torch.tanh(layer(h))
            aux.append(h)
        return torch.cat(aux, dim=-1), self.lm_head(h)


class HFEagleModel(nn.Module):
    def __init__(self, hidden=8, vocab=16, eagle_ttt_steps=2, eagle_mix_hidden_states=True):
        super().__init__()
        self.base_model = BaseModel(hidden, vocab)
        for p in self.base_model.parameters():
            p.requires_grad_(False)
        self.eagle_module = EagleModule(hidden, vocab)
        self.eagle_ttt_steps = eagle_ttt_steps
        self.eagle_mix_hidden_states = eagle_mix_hidden_states
        self.eagle_loss_decay_factor = 0.9

    def _prepare_eagle_inputs(self, input_ids, aux_hiddens, base_model_logits):
        with torch.no_grad():
            eagle_input_embeds = self.base_model.embed_tokens(input_ids.roll(-1, 1))
        # concat base model intermediate (pre-norm) hiddens
        eagle_input_hiddens = self.eagle_module.fc(aux_hiddens)
        base_output_predict_tok = base_model_logits.argmax(dim=-1).detach()
        base_output_softmax_logits = torch.softmax(base_model_logits, dim=2).detach()
        return eagle_input_embeds, eagle_input_hiddens, base_output_predict_tok, base_output_softmax_logits

    def _eagle_forward(self, eagle_input_hidden_states, inputs_embeds):
        eagle_postnorm_h, eagle_prenorm_h = self.eagle_module(eagle_input_hidden_states, inputs_embeds)
        eagle_logits = self.eagle_module.lm_head(eagle_postnorm_h)
        return eagle_postnorm_h, eagle_prenorm_h, [eagle_logits]

    def _eagle_loss(self, base_output_softmax_logits, base_output_predict_tok, eagle_logits, loss_mask):
        """Function for EAGLE loss computing."""
        loss_mask = loss_mask[:, : eagle_logits.shape[1], None]
        eagle_logsoft = torch.log_softmax(eagle_logits, dim=2)
        classification_loss = -torch.sum(
            torch.sum(loss_mask * base_output_softmax_logits * eagle_logsoft, 2)
        ) / (loss_mask.sum() + 1e-5)
        return classification_loss

    def forward(self, input_ids, loss_mask=None):
        if loss_mask is None:
            loss_mask = torch.ones_like(input_ids, dtype=torch.bool)
        with torch.no_grad():
            aux_hiddens, base_logits = self.base_model(input_ids)
        (eagle_input_embeds, eagle_input_hiddens, base_output_predict_tok,
         base_output_softmax_logits) = self._prepare_eagle_inputs(input_ids, aux_hiddens, base_logits)
        eagle_loss = None
        for ttt_step in range(self.eagle_ttt_steps):
            _, eagle_output_hiddens, eagle_logits = self._eagle_forward(eagle_input_hiddens, eagle_input_embeds)
            eagle_output_hiddens = eagle_output_hiddens.roll(1, 1)

            if self.eagle_mix_hidden_states:
                batch_size, seq_len_s, _ = eagle_input_hiddens.shape
                num_to_replace = max(1, seq_len_s // (2**ttt_step + 1))

                # Randomly select positions for each batch to replace
                rand_indices = torch.rand(
                    batch_size, seq_len_s, device=eagle_input_hiddens.device
                ).argsort(dim=1)[:, :num_to_replace]

                # Clone to avoid inplace modification that breaks autograd
                eagle_input_hiddens = eagle_input_hiddens.clone()
                batch_indices = torch.arange(batch_size)[:, None]
                eagle_input_hiddens[batch_indices, rand_indices] = eagle_output_hiddens[
                    batch_indices, rand_indices
                ]
            else:
                eagle_input_hiddens = eagle_output_hiddens

            i = 0
            eagle_logit = eagle_logits[i]
            classification_loss = self._eagle_loss(
                base_output_softmax_logits[:, 1 + i + ttt_step:],
                base_output_predict_tok[:, 1 + i + ttt_step:],
                eagle_logit[:, ttt_step: -(1 + i)],
                loss_mask[:, 1 + ttt_step:],
            )
            # Apply loss decay factor to focus on early steps
            classification_loss *= self.eagle_loss_decay_factor ** (ttt_step + i)
            eagle_loss = classification_loss if eagle_loss is None else eagle_loss + classification_loss
        return eagle_loss
