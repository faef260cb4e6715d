# reference fix for 402: the fix, applied upstream: `net = net + original_feature`.
import torch
import torch.nn as nn
import torch.nn.functional as F


def decode_scores(net, end_points, num_class, num_heading_bin, num_size_cluster, mode=''):
    net_transposed = net.transpose(2, 1)  # (batch_size, 1024, ..)
    start = 0 if mode == 'opt' else 2
    if mode != 'opt':
        end_points['objectness_scores' + mode] = net_transposed[:, :, 0:2]
    end_points['center' + mode] = net_transposed[:, :, start:start + 3]
    end_points['heading_scores' + mode] = net_transposed[:, :, start + 3:start + 3 + num_heading_bin]
    end_points['sem_cls_scores' + mode] = net_transposed[:, :, start + 3 + num_heading_bin * 2 + num_size_cluster * 4:]
    return end_points


class ProposalModuleRefine(nn.Module):
    def __init__(self, num_class, num_heading_bin, num_size_cluster, num_proposal, seed_feat_dim=16):
        super().__init__()
        self.num_class = num_class
        self.num_heading_bin = num_heading_bin
        self.num_size_cluster = num_size_cluster
        self.num_proposal = num_proposal
        C = seed_feat_dim
        # stand-ins for PointnetSAModuleVotes / PointnetSAModuleMatch (pointnet2 CUDA ops)
        self.vote_aggregation = nn.Conv1d(C, C, 1)
        self.match_surface_center = nn.Conv1d(C, C, 1)
        self.match_line_center = nn.Conv1d(C, C, 1)

        self.conv1 = torch.nn.Conv1d(C, C, 1)
        self.conv2 = torch.nn.Conv1d(C, C, 1)
        self.conv3 = torch.nn.Conv1d(C, 2 + 3 + num_heading_bin * 2 + num_size_cluster * 4 + self.num_class, 1)
        self.bn1 = torch.nn.BatchNorm1d(C)
        self.bn2 = torch.nn.BatchNorm1d(C)

        self.conv_surface1 = torch.nn.Conv1d(C, C, 1)
        self.bn_surface1 = torch.nn.BatchNorm1d(C)
        self.conv_line1 = torch.nn.Conv1d(C, C, 1)
        self.bn_line1 = torch.nn.BatchNorm1d(C)

        self.conv_refine1 = torch.nn.Conv1d(2 * C, C, 1)
        self.conv_refine2 = torch.nn.Conv1d(C, C, 1)
        self.conv_refine3 = torch.nn.Conv1d(C, C, 1)
        self.conv_refine4 = torch.nn.Conv1d(C, 3 + num_heading_bin * 2 + num_size_cluster * 4 + self.num_class, 1)
        self.bn_refine1 = torch.nn.BatchNorm1d(C)
        self.bn_refine2 = torch.nn.BatchNorm1d(C)
        self.bn_refine3 = torch.nn.BatchNorm1d(C)

    def forward(self, end_points):
        features = self.vote_aggregation(end_points['vote_features'])
        batch_size = features.shape[0]
        object_proposal = features.shape[2]
        # --------- PROPOSAL GENERATION ---------
        net = F.relu(self.bn1(self.conv1(features)))
        net = F.relu(self.bn2(self.conv2(net)))
        original_feature = net
        net = self.conv3(net)  # (batch_size, 2+3+num_heading_bin*2+num_size_cluster*4, num_proposal)

        end_points = decode_scores(net, end_points, self.num_class, self.num_heading_bin, self.num_size_cluster,
                                   mode='center')

        surface_features = self.match_surface_center(features.repeat(1, 1, 6))
        line_features = self.match_line_center(features.repeat(1, 1, 12))

        surface_features = F.relu(self.bn_surface1(self.conv_surface1(surface_features))).view(
            batch_size, -1, 6, object_proposal).contiguous()
        line_features = F.relu(self.bn_line1(self.conv_line1(line_features))).view(
            batch_size, -1, 12, object_proposal).contiguous()

        surface_pool_feature = F.max_pool2d(surface_features, (6, 1), stride=1).squeeze(2)
        line_pool_feature = F.max_pool2d(line_features, (12, 1), stride=1).squeeze(2)

        combine_feature = torch.cat((surface_pool_feature, line_pool_feature), dim=1)

        net = F.relu(self.bn_refine1(self.conv_refine1(combine_feature)))
        net = net + original_feature  ### Residual feature
        net = F.relu(self.bn_refine2(self.conv_refine2(net)))
        net = F.relu(self.bn_refine3(self.conv_refine3(net)))
        net = self.conv_refine4(net)

        end_points = decode_scores(net, end_points, self.num_class, self.num_heading_bin, self.num_size_cluster,
                                   mode='opt')
        return end_points


def compute():
    torch.manual_seed(0)
    model = ProposalModuleRefine(num_class=4, num_heading_bin=3, num_size_cluster=4, num_proposal=8)
    end_points = {'vote_features': torch.randn(2, 16, 8)}
    end_points = model(end_points)
    loss = sum(end_points[k].pow(2).mean() for k in
               ('objectness_scorescenter', 'centercenter', 'centeropt', 'heading_scoresopt', 'sem_cls_scoresopt'))
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
