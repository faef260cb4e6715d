# FlagEmbedding/finetune/embedder/encoder_only/m3/modeling.py as of the parent of commit 6eefbac ("fix m3 sparse
# embedding bug - using optimization suggestion from issue #1364 only when not training"):
# EncoderOnlyEmbedderM3Model._sparse_embedding, compute_sparse_score and _compute_similarity, copied.
# The culprit: the sparse (lexical-weight) embedding is built with
# `sparse_embedding.scatter_reduce(dim=-1, index=input_ids, src=token_weights.squeeze(-1), reduce="amax")` (the
# #1364 optimisation, commit 4e82b52) and then the special tokens are zeroed in place,
# `sparse_embedding[:, unused_tokens] *= 0.`; ScatterReduceBackward (amax) saved its result.
# Stand-ins: the class keeps only what the sparse path reads (sparse_linear, vocab_size, tokenizer's four special
# ids, temperature); AbsEmbedderModel, the dense / colbert heads and the transformer are cut (the case feeds the
# last hidden state); the tokenizer is a namespace with cls/eos/pad/unk token ids.
import torch


class EncoderOnlyEmbedderM3Model(torch.nn.Module):
    """Embedder class for M3 model (sparse path only, see the header)."""

    def __init__(self, sparse_linear, tokenizer, vocab_size, temperature: float = 1):
        super().__init__()
        self.sparse_linear = sparse_linear
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size
        self.temperature = temperature

    def _compute_similarity(self, q_reps, p_reps):
        """Computes the similarity between query and passage representations using inner product."""
        if len(p_reps.size()) == 2:
            return torch.matmul(q_reps, p_reps.transpose(0, 1))
        return torch.matmul(q_reps, p_reps.transpose(-2, -1))

    def _sparse_embedding(self, hidden_state, input_ids, return_embedding: bool = True):
        """Compute and return the sparse embedding.

        Args:
            hidden_state (torch.Tensor): The model output's last hidden state.
            input_ids (_type_): Ids from input features.
            return_embedding (bool, optional): If True, return the computed embedding, otherwise just return the token weights. 
                Defaults to ``True``.

        Returns:
            torch.Tensor: The sparse embedding or just the token weights.
        """
        token_weights = torch.relu(self.sparse_linear(hidden_state))
        if not return_embedding: return token_weights

        sparse_embedding = torch.zeros(
            input_ids.size(0), self.vocab_size,
            dtype=token_weights.dtype,
            device=token_weights.device
        )
        sparse_embedding = sparse_embedding.scatter_reduce(
            dim=-1, index=input_ids, src=token_weights.squeeze(-1), reduce="amax"
        )

        unused_tokens = [
            self.tokenizer.cls_token_id, self.tokenizer.eos_token_id,
            self.tokenizer.pad_token_id, self.tokenizer.unk_token_id
        ]
        sparse_embedding[:, unused_tokens] *= 0.
        return sparse_embedding

    def compute_sparse_score(self, q_reps, p_reps):
        """Compute the sparse score.

        Args:
            q_reps (torch.Tensor): Query representations.
            p_reps (torch.Tensor): Passage representations.

        Returns:
            torch.Tensor: The computed sparse scores, adjusted by temperature.
        """
        scores = self._compute_similarity(q_reps, p_reps) / self.temperature
        scores = scores.view(q_reps.size(0), -1)
        return scores
