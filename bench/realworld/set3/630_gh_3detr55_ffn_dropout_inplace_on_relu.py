# source: https://github.com/facebookresearch/3detr/issues/55
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# 3DETR (3D object detection transformer on point clouds): training raises "one of the variables needed for
# gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [256, 8, 256]], which is
# output 0 of ReluBackward0, is at version 1". In models/transformer.py (here 630helpers_3detr_transformer.py; its
# models/helpers.py is 630helpers_3detr_helpers.py) the encoder and decoder layers run their FFN as
# `self.linear2(self.dropout(self.activation(self.linear1(x))))` with `self.dropout = nn.Dropout(dropout,
# inplace=True)`, so the dropout overwrites the ReLU output that ReluBackward0 saved. The reporter's fix, confirmed
# by another user in the thread: remove every `inplace=True` from the Dropouts in the repo (the _fixed helper).
# Stand-ins: the PointNet++ set-abstraction pre-encoder (CUDA ops) is a shared MLP over the first 32 points,
# furthest-point sampling takes the first nqueries points, the Fourier position embedding is a Linear on the
# normalised coordinates, and the Hungarian set loss is a per-query CE + L1 against random targets; dims 32/64.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper modules
TRANSFORMER = "630helpers_3detr_transformer"
GenericMLP = import_module("630helpers_3detr_helpers").GenericMLP


class PreEncoderStandIn(nn.Module):
    """Stand-in for PointnetSAModuleVotes: keeps npoint points and lifts their coordinates to features."""
    def __init__(self, npoint, out_dim):
        super().__init__()
        self.npoint = npoint
        self.mlp = GenericMLP(input_dim=3, hidden_dims=[out_dim], output_dim=out_dim, norm_fn_name="bn1d",
                              use_conv=True, output_use_activation=True, output_use_norm=True)

    def forward(self, xyz, features=None):
        inds = torch.arange(self.npoint).unsqueeze(0).repeat(xyz.shape[0], 1)
        new_xyz = xyz[:, :self.npoint]
        new_features = self.mlp(new_xyz.transpose(1, 2).contiguous())
        return new_xyz, new_features, inds


class PositionEmbeddingStandIn(nn.Module):
    """Stand-in for PositionEmbeddingCoordsSine: batch x npoints x 3 -> batch x d_pos x npoints."""
    def __init__(self, d_pos):
        super().__init__()
        self.proj = nn.Linear(3, d_pos)

    def forward(self, xyz, input_range=None):
        lo, hi = input_range
        xyz = (xyz - lo[:, None, :]) / (hi - lo)[:, None, :]
        return self.proj(xyz).permute(0, 2, 1)


class Model3DETR(nn.Module):
    def __init__(self, tr, encoder_dim=32, decoder_dim=32, num_queries=8, num_semcls=3):
        super().__init__()
        self.pre_encoder = PreEncoderStandIn(npoint=32, out_dim=encoder_dim)
        encoder_layer = tr.TransformerEncoderLayer(d_model=encoder_dim, nhead=4, dim_feedforward=64,
                                                   dropout=0.1, activation="relu")
        self.encoder = tr.TransformerEncoder(encoder_layer=encoder_layer, num_layers=2)
        self.encoder_to_decoder_projection = GenericMLP(
            input_dim=encoder_dim,
            hidden_dims=[encoder_dim],
            output_dim=decoder_dim,
            norm_fn_name="bn1d",
            activation="relu",
            use_conv=True,
            output_use_activation=True,
            output_use_norm=True,
            output_use_bias=False,
        )
        self.pos_embedding = PositionEmbeddingStandIn(decoder_dim)
        self.query_projection = GenericMLP(
            input_dim=decoder_dim,
            hidden_dims=[decoder_dim],
            output_dim=decoder_dim,
            use_conv=True,
            output_use_activation=True,
            hidden_use_bias=True,
        )
        decoder_layer = tr.TransformerDecoderLayer(d_model=decoder_dim, nhead=4, dim_feedforward=64, dropout=0.1)
        self.decoder = tr.TransformerDecoder(decoder_layer, num_layers=2, return_intermediate=True)
        mlp_func = lambda output_dim: GenericMLP(input_dim=decoder_dim, hidden_dims=[decoder_dim, decoder_dim],
                                                 output_dim=output_dim, norm_fn_name="bn1d", activation="relu",
                                                 use_conv=True, hidden_use_bias=True, dropout=0.1)
        self.mlp_heads = nn.ModuleDict([("sem_cls_head", mlp_func(num_semcls + 1)), ("center_head", mlp_func(3))])
        self.num_queries = num_queries

    def get_query_embeddings(self, encoder_xyz, point_cloud_dims):
        query_inds = torch.arange(self.num_queries).unsqueeze(0).repeat(encoder_xyz.shape[0], 1)  # FPS stand-in
        query_xyz = [torch.gather(encoder_xyz[..., x], 1, query_inds) for x in range(3)]
        query_xyz = torch.stack(query_xyz)
        query_xyz = query_xyz.permute(1, 2, 0)
        pos_embed = self.pos_embedding(query_xyz, input_range=point_cloud_dims)
        query_embed = self.query_projection(pos_embed)
        return query_xyz, query_embed

    def run_encoder(self, point_clouds):
        xyz, features = point_clouds[..., 0:3].contiguous(), None
        pre_enc_xyz, pre_enc_features, pre_enc_inds = self.pre_encoder(xyz, features)
        # nn.MultiHeadAttention in encoder expects npoints x batch x channel features
        pre_enc_features = pre_enc_features.permute(2, 0, 1)
        enc_xyz, enc_features, enc_inds = self.encoder(pre_enc_features, xyz=pre_enc_xyz)
        if enc_inds is None:
            enc_inds = pre_enc_inds
        return enc_xyz, enc_features, enc_inds

    def forward(self, inputs):
        point_clouds = inputs["point_clouds"]
        enc_xyz, enc_features, enc_inds = self.run_encoder(point_clouds)
        enc_features = self.encoder_to_decoder_projection(
            enc_features.permute(1, 2, 0)
        ).permute(2, 0, 1)
        point_cloud_dims = [inputs["point_cloud_dims_min"], inputs["point_cloud_dims_max"]]
        query_xyz, query_embed = self.get_query_embeddings(enc_xyz, point_cloud_dims)
        enc_pos = self.pos_embedding(enc_xyz, input_range=point_cloud_dims)
        enc_pos = enc_pos.permute(2, 0, 1)
        query_embed = query_embed.permute(2, 0, 1)
        tgt = torch.zeros_like(query_embed)
        box_features = self.decoder(tgt, enc_features, query_pos=query_embed, pos=enc_pos)[0]
        # box_features: num_layers x nqueries x batch x channel -> (num_layers*batch) x channel x nqueries
        num_layers, nq, batch, channel = box_features.shape
        box_features = box_features.permute(0, 2, 3, 1).reshape(num_layers * batch, channel, nq)
        cls_logits = self.mlp_heads["sem_cls_head"](box_features).transpose(1, 2)
        center_offset = self.mlp_heads["center_head"](box_features).sigmoid().transpose(1, 2) - 0.5
        return cls_logits, center_offset


def compute():
    torch.manual_seed(0)
    tr = import_module(TRANSFORMER)
    model = Model3DETR(tr)
    model.train()
    point_clouds = torch.rand(2, 64, 3) * 4 - 2
    inputs = {"point_clouds": point_clouds,
              "point_cloud_dims_min": point_clouds.min(dim=1)[0],
              "point_cloud_dims_max": point_clouds.max(dim=1)[0]}
    cls_logits, center_offset = model(inputs)
    gt_cls = torch.randint(0, 4, cls_logits.shape[:2])
    gt_center = torch.rand_like(center_offset) - 0.5
    loss = F.cross_entropy(cls_logits.reshape(-1, 4), gt_cls.reshape(-1)) + F.l1_loss(center_offset, gt_center)
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
