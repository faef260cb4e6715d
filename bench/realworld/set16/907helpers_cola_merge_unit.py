# helper for case 907: DN_Gray/model/SK_model.py and DN_Gray/model/merge_unit.py of COLA-Net (MC-E/COLA-Net-
# Collaborative-Attention-Network-for-Image-Restoration) before PR #7: SKConv, SKUnit and merge_block as they were.
# Stand-in: ContextualAttention_Enhance (CA_model.py, patch-based non-local attention with a size selector) is
# replaced by a small embedded-Gaussian non-local block with the same interface (in_channels, use_multiple_size).
import torch
import torch.nn as nn


class SKConv(nn.Module):
    def __init__(self, features, M, G, r, stride=1, L=32):
        super(SKConv, self).__init__()
        d = max(int(features / r), L)
        self.M = M
        self.features = features
        self.convs = nn.ModuleList([])
        for i in range(M):
            if i == 0:
                self.convs.append(nn.Sequential(
                    nn.Conv2d(features, features, kernel_size=3, stride=stride, padding=1),
                    nn.BatchNorm2d(features),
                    nn.ReLU(inplace=False)
                ))
            else:
                self.convs.append(nn.Sequential(
                    nn.Conv2d(features, features, 3, 1, 1),
                    nn.BatchNorm2d(features),
                    nn.ReLU(inplace=False),
                    nn.Conv2d(features, features, 3, 1, 1),
                    nn.BatchNorm2d(features),
                    nn.ReLU(inplace=False)
                ))
        self.fc = nn.Linear(features, d)
        self.fcs = nn.ModuleList([])
        for i in range(M):
            self.fcs.append(nn.Linear(d, features))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            fea = conv(x).unsqueeze_(dim=1)
            if i == 0:
                feas = fea
            else:
                feas = torch.cat([feas, fea], dim=1)
        fea_U = torch.sum(feas, dim=1)
        fea_s = fea_U.mean(-1).mean(-1)
        fea_z = self.fc(fea_s)
        for i, fc in enumerate(self.fcs):
            vector = fc(fea_z).unsqueeze_(dim=1)
            if i == 0:
                attention_vectors = vector
            else:
                attention_vectors = torch.cat([attention_vectors, vector], dim=1)
        attention_vectors = self.softmax(attention_vectors)
        attention_vectors = attention_vectors.unsqueeze(-1).unsqueeze(-1)
        fea_v = (feas * attention_vectors).sum(dim=1)
        return fea_v


class SKUnit(nn.Module):
    def __init__(self, in_features, out_features, M, G, r, mid_features=None, stride=1, L=32):
        super(SKUnit, self).__init__()
        if mid_features is None:
            mid_features = int(out_features / 2)
        self.feas = nn.Sequential(
            nn.Conv2d(in_features, mid_features, 1, stride=1),
            nn.BatchNorm2d(mid_features),
            SKConv(mid_features, M, G, r, stride=stride, L=L),
            nn.BatchNorm2d(mid_features),
            nn.Conv2d(mid_features, out_features, 1, stride=1),
            nn.BatchNorm2d(out_features)
        )
        if in_features == out_features:
            self.shortcut = nn.Sequential()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_features, out_features, 1, stride=stride),
                nn.BatchNorm2d(out_features)
            )

    def forward(self, x):
        fea = self.feas(x)
        return fea + self.shortcut(x)


class ContextualAttention_Enhance(nn.Module):
    def __init__(self, in_channels=64, inter_channels=16, use_multiple_size=False):
        super().__init__()
        self.g = nn.Conv2d(in_channels, inter_channels, 1)
        self.theta = nn.Conv2d(in_channels, inter_channels, 1)
        self.phi = nn.Conv2d(in_channels, inter_channels, 1)
        self.W = nn.Conv2d(inter_channels, in_channels, 1)

    def forward(self, b):
        n, _, h, w = b.shape
        g = self.g(b).flatten(2)
        theta = self.theta(b).flatten(2).transpose(1, 2)
        phi = self.phi(b).flatten(2)
        attn = torch.softmax(theta @ phi, dim=-1)
        y = (g @ attn.transpose(1, 2)).view(n, -1, h, w)
        return b + self.W(y)


class merge_block(nn.Module):
    def __init__(self, in_channels, out_channels, vector_length=32, use_multiple_size=False, use_topk=False):
        super(merge_block, self).__init__()
        self.SKUnit = SKUnit(in_features=in_channels, out_features=out_channels, M=2, G=8, r=2)
        self.CAUnit = ContextualAttention_Enhance(in_channels=in_channels, use_multiple_size=use_multiple_size)
        self.fc1 = nn.Linear(in_features=in_channels, out_features=vector_length)
        self.att_CA = nn.Linear(in_features=vector_length, out_features=out_channels)
        self.att_SK = nn.Linear(in_features=vector_length, out_features=out_channels)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        out1 = self.SKUnit(x).unsqueeze_(dim=1)
        out2 = self.CAUnit(x).unsqueeze_(dim=1)
        out = torch.cat((out2, out1), dim=1)
        U = torch.sum(out, dim=1)
        attention_vector = U.mean(-1).mean(-1)
        attention_vector = self.fc1(attention_vector)
        attention_vector_CA = self.att_CA(attention_vector).unsqueeze_(dim=1)
        attention_vector_SK = self.att_SK(attention_vector).unsqueeze_(dim=1)
        vector = torch.cat((attention_vector_CA, attention_vector_SK), dim=1)
        vector = self.softmax(vector).unsqueeze(-1).unsqueeze(-1)
        out = (out * vector).sum(dim=1)
        return out
