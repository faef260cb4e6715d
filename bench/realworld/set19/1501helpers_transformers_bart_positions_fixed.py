# huggingface/transformers, src/transformers/modeling_bart.py with PR #8226 ("[bart] 2 SinusoidalPositionalEmbedding
# fixes", merged): `out.requires_grad = False` set before the writes ("set early to avoid an error in pytorch-1.8+"),
# and the odd-dim sentinel. Stand-in (marked): numpy is not used; `position_enc` is built
# with torch in float64 from the same formula, and `torch.FloatTensor(np.sin(...))` becomes `torch.sin(...).float()`.
import torch
from torch import nn


def _position_enc(n_pos, dim):
    # stand-in for np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    return torch.tensor(
        [[pos / (10000 ** (2 * (j // 2) / dim)) for j in range(dim)] for pos in range(n_pos)], dtype=torch.float64
    )


class SinusoidalPositionalEmbedding(nn.Embedding):
    """This module produces sinusoidal positional embeddings of any length."""

    def __init__(self, num_positions, embedding_dim, padding_idx=None):
        super().__init__(num_positions, embedding_dim)
        if embedding_dim % 2 != 0:
            raise NotImplementedError(f"odd embedding_dim {embedding_dim} not supported")
        self.weight = self._init_weight(self.weight)

    @staticmethod
    def _init_weight(out: nn.Parameter):
        """Identical to the XLM create_sinusoidal_embeddings except features are not interleaved.
            The cos features are in the 2nd half of the vector. [dim // 2:]
        """
        n_pos, dim = out.shape
        position_enc = _position_enc(n_pos, dim)
        out.requires_grad = False  # set early to avoid an error in pytorch-1.8+
        sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
        out[:, 0:sentinel] = torch.sin(position_enc[:, 0::2]).float()
        out[:, sentinel:] = torch.cos(position_enc[:, 1::2]).float()
        out.detach_()
        return out

    @torch.no_grad()
    def forward(self, input_ids, use_cache=False):
        """Input is expected to be of size [bsz x seqlen]."""
        bsz, seq_len = input_ids.shape[:2]
        if use_cache:
            positions = input_ids.data.new(1, 1).fill_(seq_len - 1)  # called before slicing
        else:
            # starts at 0, ends at 1-seq_len
            positions = torch.arange(seq_len, dtype=torch.long, device=self.weight.device)
        return super().forward(positions)
