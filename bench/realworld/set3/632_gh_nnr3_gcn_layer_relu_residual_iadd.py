# source: https://github.com/Veason-silverbullet/NNR/issues/3
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# NNR (news recommendation, SUE user encoder = GCN over the user's clicked-news graph + intra/inter-cluster attention):
# on torch 1.10 `loss.backward()` in trainer.py fails with "one of the variables needed for gradient computation has
# been modified by an inplace operation" (the report names a [400, 1] TBackward tensor). The maintainer traced it to
# layers.py line 291 (here 632helpers_nnr_layers.py): GCNLayer.forward does `out = F.relu(out)` and, with the
# default residual connection, `out += feature`, overwriting the ReLU output that ReluBackward0 saved; the fix
# (commit 5dd9f16, referenced in the thread) is `out = out + feature`. On torch 2.13 the reduction fails on that
# ReLU output. Stand-ins: the news encoder is a Linear over random per-news features, torch_scatter's
# scatter_softmax/scatter_add are written with torch.scatter_reduce/scatter_add, the Config is a SimpleNamespace
# with small sizes (6 history news, 4 categories, 16-dim embeddings), and the loss is NNR's softmax over
# 1 positive + 2 negative candidates.
import math
import os
import sys
from importlib import import_module
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
LAYERS = "632helpers_nnr_layers"


def scatter_add(src, index, dim, out):
    """Stand-in for torch_scatter.scatter_add (index broadcast over src's trailing dims)."""
    while index.dim() < src.dim():
        index = index.unsqueeze(-1)
    return out.scatter_add(dim, index.expand_as(src), src)


def scatter_softmax(src, index, dim):
    """Stand-in for torch_scatter.scatter_softmax: softmax of src within the groups given by index."""
    size = list(src.shape)
    size[dim] = int(index.max()) + 1
    group_max = src.new_zeros(size).scatter_reduce(dim, index, src, 'amax', include_self=False)
    ex = (src - group_max.gather(dim, index)).exp()
    denom = src.new_zeros(size).scatter_add(dim, index, ex)
    return ex / denom.gather(dim, index)


class NewsEncoderStandIn(nn.Module):
    def __init__(self, feature_dim, news_embedding_dim):
        super().__init__()
        self.news_embedding_dim = news_embedding_dim
        self.affine = nn.Linear(feature_dim, news_embedding_dim)

    def forward(self, title_text, *unused):
        return F.relu(self.affine(title_text))


class UserEncoder(nn.Module):
    def __init__(self, news_encoder, config):
        super(UserEncoder, self).__init__()
        self.news_embedding_dim = news_encoder.news_embedding_dim
        self.news_encoder = news_encoder
        self.device = torch.device('cpu')


def build_sue(layers):
    GCN, ScaledDotProduct_CandidateAttention = layers.GCN, layers.ScaledDotProduct_CandidateAttention

    class SUE(UserEncoder):
        def __init__(self, news_encoder, config):
            super(SUE, self).__init__(news_encoder, config)
            self.attention_dim = max(config.attention_dim, self.news_embedding_dim // 4)
            self.proxy_node_embedding = nn.Parameter(torch.zeros([config.category_num, self.news_embedding_dim], device=self.device))
            self.gcn = GCN(in_dim=self.news_embedding_dim, out_dim=self.news_embedding_dim, hidden_dim=self.news_embedding_dim, num_layers=config.gcn_layer_num, dropout=config.dropout_rate / 2, residual=not config.no_gcn_residual, layer_norm=config.gcn_layer_norm)
            self.intraCluster_K = nn.Linear(in_features=self.news_embedding_dim, out_features=self.attention_dim, bias=True)
            self.intraCluster_Q = nn.Linear(in_features=self.news_embedding_dim, out_features=self.attention_dim, bias=True)
            self.clusterFeatureAffine = nn.Linear(in_features=self.news_embedding_dim, out_features=self.news_embedding_dim, bias=True)
            self.interClusterAttention = ScaledDotProduct_CandidateAttention(self.news_embedding_dim, self.news_embedding_dim, self.attention_dim)
            self.dropout = nn.Dropout(p=config.dropout_rate, inplace=True)
            self.dropout_ = nn.Dropout(p=config.dropout_rate, inplace=False)
            self.category_num = config.category_num + 1 # extra one category index for padding news
            self.max_history_num = config.max_history_num
            self.attention_scalar = math.sqrt(float(self.attention_dim))

        def initialize(self):
            self.gcn.initialize()
            nn.init.zeros_(self.proxy_node_embedding)
            nn.init.xavier_uniform_(self.intraCluster_K.weight)
            nn.init.zeros_(self.intraCluster_K.bias)
            nn.init.xavier_uniform_(self.intraCluster_Q.weight)
            nn.init.zeros_(self.intraCluster_Q.bias)
            nn.init.xavier_uniform_(self.clusterFeatureAffine.weight, gain=nn.init.calculate_gain('relu'))
            nn.init.zeros_(self.clusterFeatureAffine.bias)
            self.interClusterAttention.initialize()

        def forward(self, user_ID, user_title_text, user_title_mask, user_title_entity, user_content_text, user_content_mask, user_content_entity, user_category, user_subCategory, \
                    user_history_mask, user_history_graph, user_history_category_mask, user_history_category_indices, user_embedding, candidate_news_representaion):
            batch_size = user_ID.size(0)
            news_num = candidate_news_representaion.size(1)
            user_history_category_mask = user_history_category_mask.unsqueeze(dim=1).expand(-1, news_num, -1).contiguous()                                  # [batch_size, news_num, category_num]
            user_history_category_mask[:, :, -1] = 1.0
            user_history_category_indices = user_history_category_indices.unsqueeze(dim=1).expand(-1, news_num, -1)                                         # [batch_size, news_num, max_history_num]
            history_embedding = self.news_encoder(user_title_text, user_title_mask, user_title_entity, \
                                                  user_content_text, user_content_mask, user_content_entity, \
                                                  user_category, user_subCategory, user_embedding)                                                          # [batch_size, max_history_num, news_embedding_dim]
            # 1. GCN
            history_embedding = torch.cat([history_embedding, self.dropout_(self.proxy_node_embedding.unsqueeze(dim=0).expand(batch_size, -1, -1))], dim=1) # [batch_size, max_history_num + category_num, news_embedding_dim]
            gcn_feature = self.gcn(history_embedding, user_history_graph) + history_embedding                                                               # [batch_size, max_history_num + category_num, news_embedding_dim]
            gcn_feature = gcn_feature[:, :self.max_history_num, :]                                                                                          # [batch_size, max_history_num, news_embedding_dim]
            gcn_feature = gcn_feature.unsqueeze(dim=1).expand(-1, news_num, -1, -1)                                                                         # [batch_size, news_num, max_history_num, news_embedding_dim]
            # 2. Intra-cluster attention
            K = self.intraCluster_K(gcn_feature).view([batch_size * news_num, self.max_history_num, self.attention_dim])                                    # [batch_size * news_num, max_history_num, attention_dim]
            Q = self.intraCluster_Q(candidate_news_representaion).view([batch_size * news_num, self.attention_dim, 1])                                      # [batch_size * news_num, attention_dim]
            a = torch.bmm(K, Q).view([batch_size, news_num, self.max_history_num]) / self.attention_scalar                                                  # [batch_size, news_num, max_history_num]
            alpha_intra = scatter_softmax(a, user_history_category_indices, 2).unsqueeze(dim=3)                                                             # [batch_size, news_num, max_history_num, 1]
            intra_cluster_feature = torch.zeros([batch_size, news_num, self.category_num, self.news_embedding_dim], device=self.device)                     # [batch_size, news_num, category_num, news_embedding_dim]
            intra_cluster_feature = scatter_add(alpha_intra * gcn_feature, user_history_category_indices, dim=2, out=intra_cluster_feature)                 # [batch_size, news_num, category_num, news_embedding_dim]
            # perform nonlinear transformation on intra-cluster features
            intra_cluster_feature = self.dropout(F.relu(self.clusterFeatureAffine(intra_cluster_feature), inplace=True) + intra_cluster_feature)            # [batch_size, news_num, category_num, news_embedding_dim]
            # 3. Inter-cluster attention
            inter_cluster_feature = self.interClusterAttention(
                intra_cluster_feature.view([batch_size * news_num, self.category_num, self.news_embedding_dim]),
                candidate_news_representaion.view([batch_size * news_num, self.news_embedding_dim]),
                mask=user_history_category_mask.view([batch_size * news_num, self.category_num])
            ).view([batch_size, news_num, self.news_embedding_dim])                                                                                         # [batch_size, news_num, news_embedding_dim]
            return inter_cluster_feature

    return SUE


def compute():
    torch.manual_seed(0)
    layers = import_module(LAYERS)
    SUE = build_sue(layers)
    config = SimpleNamespace(attention_dim=8, category_num=4, gcn_layer_num=4, dropout_rate=0.2,
                             no_gcn_residual=False, gcn_layer_norm=False, max_history_num=6)
    B, H, C, N, F_in, D = 2, config.max_history_num, config.category_num, 3, 12, 16
    news_encoder = NewsEncoderStandIn(F_in, D)
    user_encoder = SUE(news_encoder, config)
    user_encoder.initialize()
    user_encoder.train()

    history_features = torch.randn(B, H, F_in)
    candidate_features = torch.randn(B, N, F_in)
    category = torch.randint(0, C, (B, H))                                    # category index of each history news
    graph = torch.rand(B, H + C, H + C)
    graph = graph / graph.sum(dim=2, keepdim=True)                              # row-normalised news/proxy graph
    category_mask = torch.zeros(B, C + 1).scatter(1, category, 1.0)
    candidate_news_representaion = news_encoder(candidate_features)
    user_representation = user_encoder(torch.arange(B), history_features, None, None, None, None, None, None, None,
                                       None, graph, category_mask, category, None, candidate_news_representaion)
    logits = (user_representation * candidate_news_representaion).sum(dim=2)  # [batch_size, news_num]
    loss = F.cross_entropy(logits, torch.zeros(B, dtype=torch.long))
    loss.backward()
    params = dict(news_encoder.named_parameters(prefix='news_encoder'))
    params.update(user_encoder.named_parameters())
    return {n: p.grad.clone() for n, p in params.items() if p.grad is not None}


if __name__ == "__main__":
    compute()
