# Library module for case 3101 (original).
# lucidrains/vector-quantize-pytorch, vector_quantize_pytorch/vector_quantize_pytorch.py (gumbel_sample, cdist,
# laplace_smoothing, ema_inplace, straight_through, Codebook, VectorQuantize), read at the parent of commit 82174ed
# ("fix(codebook): avoid in-place mask update", PR #247, 2026-05-16). Written anew at small size (not copied): the
# Codebook's forward (distances, arg-max one-hot codes, quantize = one-hot @ codebook, then the usage update), its
# track_cluster_size_and_embed_avg whose `embed_onehot[~mask] = 0.` is the statement at fault (the one-hot codes were
# saved by the einsum that computed `quantize` when the codebook is learnable), update_codebook and the dead-code
# replacement, and VectorQuantize's training path (commitment loss, straight-through estimator), follow the source.
# Stand-ins: einops' rearrange / repeat / pack are written as view / expand / reshape; one codebook (no heads), no
# kmeans init, no affine parameters, no cosine-similarity codebook, no distributed all-reduce (noop in the source
# without DDP), no rotation trick / directional reparametrisation / in-place codebook optimizer / topk codes, the
# dead-code replacement samples with torch.randint (the source's batched_sample_vectors).
import torch
import torch.nn.functional as F
from torch import nn


def exists(v):
    return v is not None


def default(v, d):
    return v if exists(v) else d


def identity(t):
    return t


def cdist(x, y, eps=1e-8):
    x2 = (x ** 2).sum(-1)
    y2 = (y ** 2).sum(-1)
    xy = torch.einsum('b i d, b j d -> b i j', x, y) * -2
    return (x2.unsqueeze(-1) + y2.unsqueeze(-2) + xy).clamp(min=eps).sqrt()


def gumbel_sample(logits, temperature=1., stochastic=False, straight_through=False, dim=-1, training=True):
    size = logits.shape[dim]
    ind = logits.argmax(dim=dim)
    one_hot = F.one_hot(ind, size).type(logits.dtype)
    if not straight_through or temperature <= 0. or not training:
        return ind, one_hot
    pi1 = (logits / temperature).softmax(dim=dim)
    return ind, one_hot + pi1 - pi1.detach()


def laplace_smoothing(x, n_categories, eps=1e-5, dim=-1):
    denom = x.sum(dim=dim, keepdim=True)
    return (x + eps) / (denom + n_categories * eps)


def ema_inplace(old, new, decay):
    old.lerp_(new, 1 - decay)


def straight_through(src, tgt):
    return src + (tgt - src).detach()


class Codebook(nn.Module):
    def __init__(self, dim, codebook_size, num_codebooks=1, decay=0.8, eps=1e-5, threshold_ema_dead_code=2,
                 learnable_codebook=False, ema_update=True):
        super().__init__()
        self.decay = decay
        self.ema_update = ema_update
        self.manual_ema_update = False
        t = torch.empty(num_codebooks, codebook_size, dim)
        nn.init.kaiming_uniform_(t)
        embed = t
        self.codebook_size = codebook_size
        self.eps = eps
        self.threshold_ema_dead_code = threshold_ema_dead_code
        self.has_dead_code_replacement = threshold_ema_dead_code > 0
        self.reset_cluster_size = threshold_ema_dead_code
        self.all_reduce_fn = identity
        self.register_buffer('cluster_size', torch.ones(num_codebooks, codebook_size))
        self.register_buffer('embed_avg', embed.clone())
        self.learnable_codebook = learnable_codebook
        if learnable_codebook:
            self.embed = nn.Parameter(embed)
        else:
            self.register_buffer('embed', embed)

    def replace(self, batch_samples, batch_mask):
        for ind, (samples, mask) in enumerate(zip(batch_samples, batch_mask)):
            num = int(mask.sum().item())
            sampled = samples[torch.randint(0, samples.shape[0], (num,))]
            self.embed.data[ind][mask] = sampled
            self.cluster_size.data[ind][mask] = self.reset_cluster_size
            self.embed_avg.data[ind][mask] = sampled * self.reset_cluster_size

    def expire_codes_(self, batch_samples):
        if not self.has_dead_code_replacement or not self.training:
            return
        expired_codes = self.cluster_size < self.threshold_ema_dead_code
        if not torch.any(expired_codes):
            return
        batch_samples = batch_samples.reshape(batch_samples.shape[0], -1, batch_samples.shape[-1])
        self.replace(batch_samples, batch_mask=expired_codes)

    def update_ema(self):
        cluster_size = laplace_smoothing(self.cluster_size, self.codebook_size, self.eps) * \
            self.cluster_size.sum(dim=-1, keepdim=True)
        embed_normalized = self.embed_avg / cluster_size.unsqueeze(-1)
        self.embed.data.copy_(embed_normalized)

    def track_cluster_size_and_embed_avg(self, flatten, embed_onehot, mask=None):
        if exists(mask):
            embed_onehot[~mask] = 0.

        cluster_size = embed_onehot.sum(dim=1)
        self.all_reduce_fn(cluster_size)

        embed_sum = torch.einsum('h n d, h n c -> h c d', flatten, embed_onehot)
        embed_sum = embed_sum.contiguous()
        self.all_reduce_fn(embed_sum)

        ema_inplace(self.cluster_size, cluster_size, self.decay)
        ema_inplace(self.embed_avg, embed_sum, self.decay)

    def update_codebook(self, flatten, embed_onehot, mask=None, ema_update=None):
        ema_update = default(ema_update, self.ema_update)
        if not ema_update and not self.has_dead_code_replacement:
            return
        self.track_cluster_size_and_embed_avg(flatten, embed_onehot, mask)
        if ema_update and not self.manual_ema_update:
            self.update_ema()
        self.expire_codes_(flatten)

    def forward(self, x, mask=None, freeze_codebook=False, ema_update=None):
        ema_update = default(ema_update, self.ema_update)
        x = x.float()
        x = x.unsqueeze(0)                                  # '... -> 1 ...'
        b, n = x.shape[1], x.shape[2]
        flatten = x.reshape(x.shape[0], b * n, x.shape[-1])  # pack 'h * d'
        if exists(mask):
            mask = mask.reshape(1, b * n).expand(flatten.shape[0], -1)  # repeat 'b n -> c (b h n)'

        # get maybe learnable codes
        embed = self.embed if self.learnable_codebook else self.embed.detach()

        dist = -cdist(flatten, embed)
        embed_ind, embed_onehot = gumbel_sample(dist, dim=-1, training=self.training)
        embed_ind = embed_ind.view(1, b, n)

        if self.training:
            unpacked_onehot = embed_onehot.view(1, b, n, -1)
            quantize = torch.einsum('h b n c, h c d -> h b n d', unpacked_onehot, embed)
        else:
            quantize = embed[0][embed_ind[0]].unsqueeze(0)

        if self.training and not freeze_codebook:
            self.update_codebook(flatten, embed_onehot, mask=mask, ema_update=ema_update)

        quantize, embed_ind = quantize[0], embed_ind[0]
        return quantize, embed_ind, dist.view(1, b, n, -1)


class VectorQuantize(nn.Module):
    def __init__(self, dim, codebook_size, decay=0.8, eps=1e-5, threshold_ema_dead_code=0, commitment_weight=1.,
                 ema_update=None, learnable_codebook=None):
        super().__init__()
        ema_update = default(ema_update, True)
        learnable_codebook = default(learnable_codebook, False)
        assert not (ema_update and learnable_codebook), 'learnable codebook not compatible with EMA update'
        self.learnable_codebook = learnable_codebook
        self.commitment_weight = commitment_weight
        self.freeze_codebook = False
        self._codebook = Codebook(dim=dim, codebook_size=codebook_size, decay=decay, eps=eps,
                                  threshold_ema_dead_code=threshold_ema_dead_code,
                                  learnable_codebook=learnable_codebook, ema_update=ema_update)
        self.register_buffer('zero', torch.tensor(0.), persistent=False)

    @property
    def codebook(self):
        return self._codebook.embed[0]

    def forward(self, x, mask=None):
        input_requires_grad = x.requires_grad
        quantize, embed_ind, distances = self._codebook(x, mask=mask, freeze_codebook=self.freeze_codebook)

        commit_loss = self.zero
        if self.training:
            maybe_detach = torch.detach if not self.learnable_codebook or self.freeze_codebook else identity
            commit_quantize = maybe_detach(quantize)
            if input_requires_grad:
                quantize = straight_through(x, quantize)

            if self.commitment_weight > 0:
                if exists(mask):
                    commit_loss = F.mse_loss(commit_quantize, x, reduction='none')
                    commit_loss = commit_loss[mask].mean()
                else:
                    commit_loss = F.mse_loss(commit_quantize, x)

        loss = commit_loss * self.commitment_weight
        return quantize, embed_ind, loss
