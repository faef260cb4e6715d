# source: https://github.com/hehao13/EBLNet/issues/9
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# The GloRe-style GCN inside EBLNet's ContourPointGCN does `z = self.relu(z)` and then the Laplacian-smoothing
# residual `z += x` in place. ReLU saved z for backward, so the point-graph reasoning branch fails in backward
# (the reporter traced it to this `z += ...` line in the graph module). Backbone/edge branch are small stand-ins.
import torch
import torch.nn as nn
import torch.nn.functional as F


def get_uncertain_point_coords_on_grid(uncertainty_map, num_points):
    R, _, H, W = uncertainty_map.shape

    num_points = min(H * W, num_points)
    point_indices = torch.topk(uncertainty_map.view(R, H * W), k=num_points, dim=1)[1]
    point_coords = torch.zeros(R, num_points, 2, dtype=torch.float, device=uncertainty_map.device)
    point_coords[:, :, 0] = point_indices % W
    point_coords[:, :, 1] = point_indices // W
    return point_indices, point_coords


def point_sample(input, point_indices, **kwargs):
    N, C, H, W = input.shape
    point_indices = point_indices.unsqueeze(1).expand(-1, C, -1)
    flatten_input = input.flatten(start_dim=2)
    sampled_feats = flatten_input.gather(dim=2, index=point_indices).view_as(point_indices)   # n c p
    return sampled_feats


class GCN(nn.Module):
    """
        Implementation of simple GCN operation in Glore Paper cvpr2019
    """
    def __init__(self, node_num, node_fea):
        super(GCN, self).__init__()
        self.node_num = node_num
        self.node_fea = node_fea
        self.conv_adj = nn.Conv1d(self.node_num, self.node_num, kernel_size=1, bias=False)
        self.bn_adj = nn.BatchNorm1d(self.node_num)

        self.conv_wg = nn.Conv1d(self.node_fea, self.node_fea, kernel_size=1, bias=False)
        self.bn_wg = nn.BatchNorm1d(self.node_fea)
        self.relu = nn.ReLU()

    def forward(self, x):
        """
            x: shape: (b, n, d)
        """
        z = self.conv_adj(x)
        z = self.bn_adj(z)
        z = self.relu(z)

        # Laplacian smoothing
        z += x
        z = z.transpose(1, 2).contiguous()  # (b, d, n)
        z = self.conv_wg(z)
        z = self.bn_wg(z)
        z = self.relu(z)
        z = z.transpose(1, 2).contiguous()  # (b, n, d)

        return z


class ContourPointGCN(nn.Module):
    def __init__(self, inplance, num_points, thresholds=0.8):
        super(ContourPointGCN, self).__init__()
        self.num_points = num_points
        self.thresholds = thresholds
        self.gcn = GCN(num_points, inplance)

    def forward(self, x, edge):
        B, C, H, W = x.size()
        edge[edge < self.thresholds] = 0
        edge_index, point_coords = get_uncertain_point_coords_on_grid(edge, self.num_points)

        gcn_features = point_sample(
            x, edge_index).permute(0, 2, 1)  # b, c, n - > b, n, c (n: points, c: features)

        gcn_features_reasoned = self.gcn(gcn_features)  # b, n, c

        gcn_features_reasoned = gcn_features_reasoned.permute(0, 2, 1)  # b, c, n

        edge_index = edge_index.unsqueeze(1).expand(-1, C, -1)

        final_features = x.reshape(B, C, H * W).scatter(2, edge_index, gcn_features_reasoned).view(B, C, H, W)

        return final_features


class TinyEBLNet(nn.Module):
    def __init__(self, channels=8, num_points=12, num_classes=2):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU())
        self.edge_head = nn.Conv2d(channels, 1, 1)
        self.refine = ContourPointGCN(channels, num_points)
        self.cls = nn.Conv2d(channels, num_classes, 1)

    def forward(self, img):
        x = self.body(img)
        edge = self.edge_head(x)
        return self.cls(self.refine(x, edge))


def compute():
    torch.manual_seed(0)
    model = TinyEBLNet()
    img = torch.randn(2, 3, 8, 8)
    target = torch.randint(0, 2, (2, 8, 8))
    loss = F.cross_entropy(model(img), target)
    loss.backward()
    # the edge head only selects the points (topk indices), so it gets no gradient from this loss
    return {name: p.grad for name, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
