# source: https://github.com/huggingface/trl/commit/4d2c29291a8a8471b1846343130f0c3c9080ea26
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# TRL, trl/trainer/cpo_trainer.py (Contrastive Preference Optimization), encoder-decoder models: in
# concatenated_forward the NLL term is `cross_entropy_loss(all_logits[:len_chosen], labels[:len_chosen])` with
# `labels = concatenated_batch["concatenated_labels"]` (for encoder-decoders neither sliced nor copied: `.view(-1)`
# and `.to(device)` keep the storage), then get_batch_logps(all_logits, concatenated_batch["concatenated_labels"],
# is_encoder_decoder=True) writes the pad positions in place, `labels[labels == label_pad_token_id] = 0` (only the
# decoder-only branch clones first). nn.CrossEntropyLoss saved the target, so the training step's backward fails
# with "modified by an inplace operation" (a LongTensor). Commit 4d2c29291 "fix gradient error of inplace operation
# for enc-dec models" (by the CPO author, shortly after PR #1382 added the trainer):
# `labels = concatenated_batch["concatenated_labels"].clone()`.
# The library module is 1201helpers_trl_cpo_trainer.py (ref: 1201helpers_trl_cpo_trainer_fixed.py).
# Stand-ins: a tiny encoder-decoder (embeddings, mean-pooled encoder state added to every decoder position, a linear
# LM head) instead of a T5 / NLLB model, vocabulary 9; a concatenated batch of 2 chosen and 2 rejected responses,
# source length 5, target length 4 with -100 padding; sigmoid loss, beta 0.1.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cpo = importlib.import_module("1201helpers_trl_cpo_trainer")


class TinySeq2Seq(nn.Module):
    def __init__(self, vocab=9, d=6):
        super().__init__()
        self.enc_emb = nn.Embedding(vocab, d)
        self.dec_emb = nn.Embedding(vocab, d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, input_ids, attention_mask=None, decoder_input_ids=None):
        enc = self.enc_emb(input_ids) * attention_mask[..., None]
        ctx = enc.sum(1, keepdim=True) / attention_mask.sum(1, keepdim=True)[..., None]
        return self.lm_head(torch.tanh(self.dec_emb(decoder_input_ids) + ctx))


def compute():
    torch.manual_seed(0)
    model = TinySeq2Seq()
    trainer = cpo.CPOTrainer(model, beta=0.1, is_encoder_decoder=True)
    prompt = torch.randint(1, 9, (2, 5))
    concatenated_batch = {
        "concatenated_input_ids": torch.cat([prompt, prompt]),
        "concatenated_attention_mask": torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]] * 2),
        "concatenated_labels": torch.tensor([[3, 4, 5, 1], [2, 6, -100, -100],
                                             [7, 8, 1, -100], [5, 5, 2, 1]]),
    }
    loss, metrics = trainer.get_batch_loss_metrics(model, concatenated_batch, len_chosen=2)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
