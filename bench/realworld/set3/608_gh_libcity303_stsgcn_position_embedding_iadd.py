# source: https://github.com/LibCity/Bigscity-LibCity/issues/303
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# LibCity STSGCN (traffic flow prediction): STSGCN.forward() does `data = torch.relu(self.first_layer_embedding(data))`
# and passes `data` to the first STSGCL layer, whose PositionEmbedding.forward() does `data += self.temporal_emb` and
# `data += self.spatial_emb` on the ReLU output that ReluBackward0 saved. The reporter's fix, merged into LibCity:
# `data = stsgcl_layer(data.clone(), self.adj)`. numpy in construct_adj() is replaced by torch; the
# AbstractTrafficStateModel base, the scaler and the data loader are replaced by plain tensors.
import torch
import torch.nn as nn
from torch.nn.init import xavier_uniform_


class PositionEmbedding(nn.Module):
    def __init__(self, input_length, num_of_vertices, embedding_size, temporal=True, spatial=True, config=None):
        super(PositionEmbedding, self).__init__()
        self.input_length = input_length
        self.num_of_vertices = num_of_vertices
        self.embedding_size = embedding_size
        self.temporal = temporal
        self.spatial = spatial
        self.temporal_emb = torch.nn.Parameter(torch.zeros((1, input_length, 1, embedding_size)).to(config['device']))
        xavier_uniform_(self.temporal_emb)
        self.spatial_emb = torch.nn.Parameter(torch.zeros((1, 1, num_of_vertices, embedding_size)).to(config['device']))
        xavier_uniform_(self.spatial_emb)

    def forward(self, data):
        if self.temporal:
            data += self.temporal_emb
        if self.spatial:
            data += self.spatial_emb
        return data


class GcnOperation(nn.Module):
    def __init__(self, num_of_filter, num_of_features, num_of_vertices, activation):
        super().__init__()
        assert activation in {'GLU', 'relu'}
        self.num_of_filter = num_of_filter
        self.num_of_features = num_of_features
        self.num_of_vertices = num_of_vertices
        self.activation = activation
        if activation == "GLU":
            self.layer = nn.Linear(num_of_features, 2 * num_of_filter)
        elif activation == "relu":
            self.layer = nn.Linear(num_of_features, num_of_filter)

    def forward(self, data, adj):
        data = torch.matmul(adj, data)
        if self.activation == "GLU":
            data = self.layer(data)
            lhs, rhs = data.split(self.num_of_filter, -1)
            data = lhs * torch.sigmoid(rhs)
        elif self.activation == "relu":
            data = torch.relu(self.layer(data))
        return data


class Stsgcm(nn.Module):
    def __init__(self, filters, num_of_features, num_of_vertices, activation):
        super().__init__()
        self.filters = filters
        self.num_of_features = num_of_features
        self.num_of_vertices = num_of_vertices
        self.activation = activation
        self.layers = nn.ModuleList()
        for i in range(len(filters)):
            self.layers.append(GcnOperation(filters[i], num_of_features, num_of_vertices, activation))
            num_of_features = filters[i]

    def forward(self, data, adj):
        need_concat = []
        for i in range(len(self.layers)):
            data = self.layers[i](data, adj)
            need_concat.append(torch.transpose(data, 1, 0))
        need_concat = [
            torch.unsqueeze(i[self.num_of_vertices:2 * self.num_of_vertices, :, :], dim=0) for i in need_concat
        ]
        return torch.max(torch.cat(need_concat, dim=0), dim=0)[0]


class STSGCNLayerIndividual(nn.Module):
    def __init__(self, t, num_of_vertices, num_of_features, filters,
                 activation, temporal_emb=True, spatial_emb=True, config=None):
        super().__init__()
        self.T = t
        self.num_of_vertices = num_of_vertices
        self.num_of_features = num_of_features
        self.filters = filters
        self.activation = activation
        self.temporal_emb = temporal_emb
        self.spatial_emb = spatial_emb
        self.position_embedding = PositionEmbedding(t, num_of_vertices, num_of_features,
                                                    temporal_emb, spatial_emb, config)
        self.gcms = nn.ModuleList()
        for i in range(self.T - 2):
            self.gcms.append(Stsgcm(self.filters, self.num_of_features, self.num_of_vertices,
                                    activation=self.activation))

    def forward(self, data, adj):
        data = self.position_embedding(data)
        need_concat = []
        for i in range(self.T - 2):
            t = data[:, i:i + 3, :, :]
            t = torch.reshape(t, (-1, 3 * self.num_of_vertices, self.num_of_features))
            t = self.gcms[i](t, adj)
            t = torch.transpose(t, 0, 1)
            need_concat.append(torch.unsqueeze(t, dim=1))
        return torch.cat(need_concat, dim=1)


class STSGCL(nn.Module):
    def __init__(self, t, num_of_vertices, num_of_features, filters, module_type, activation, temporal_emb=True,
                 spatial_emb=True, config=None):
        super().__init__()
        assert module_type in {'sharing', 'individual'}
        self.T = t
        self.layer = STSGCNLayerIndividual(t, num_of_vertices, num_of_features, filters,
                                           activation, temporal_emb, spatial_emb, config)

    def forward(self, data, adj):
        return self.layer(data, adj)


class OutputLayer(nn.Module):
    def __init__(self, num_of_vertices, input_length, num_of_features,
                 num_of_filters=128, predict_length=12, output_dim=1):
        super().__init__()
        self.num_of_vertices = num_of_vertices
        self.input_length = input_length
        self.num_of_features = num_of_features
        self.num_of_filters = num_of_filters
        self.predict_length = predict_length
        self.output_dim = output_dim
        self.hidden_layer = nn.Linear(self.input_length * self.num_of_features, self.num_of_filters)
        self.ouput_layer = nn.Linear(self.num_of_filters, self.predict_length * self.output_dim)

    def forward(self, data):
        data = torch.transpose(data, 1, 2)
        data = torch.reshape(data, (-1, self.num_of_vertices, self.input_length * self.num_of_features))
        data = torch.relu(self.hidden_layer(data))
        data = self.ouput_layer(data).reshape((-1, self.num_of_vertices, self.predict_length, self.output_dim))
        data = data.permute(0, 2, 1, 3)
        return data


def construct_adj(a, steps):
    n = len(a)
    adj = torch.zeros([n * steps] * 2)
    for i in range(steps):
        adj[i * n: (i + 1) * n, i * n: (i + 1) * n] = a
    for i in range(n):
        for k in range(steps - 1):
            adj[k * n + i, (k + 1) * n + i] = 1
            adj[(k + 1) * n + i, k * n + i] = 1
    for i in range(len(adj)):
        adj[i, i] = 1
    return adj


class STSGCN(nn.Module):
    def __init__(self, config, data_feature):
        super().__init__()
        self.data_feature = data_feature
        self.num_nodes = self.data_feature.get('num_nodes', 1)
        self.feature_dim = self.data_feature.get('feature_dim', 1)
        self.output_dim = self.data_feature.get('output_dim', 1)
        self.module_type = config.get('module_type', 'individual')
        self.activation = config.get('act_type', 'GLU')
        self.temporal_emb = config.get('temporal_emb', True)
        self.spatial_emb = config.get('spatial_emb', True)
        self.device = config.get('device', torch.device('cpu'))
        self.input_window = config.get('input_window', 1)
        self.output_window = config.get('output_window', 1)
        self.num_of_vertices = self.num_nodes
        self.input_length = self.input_window
        self.predict_length = self.output_window

        self.adj = self.data_feature.get("adj_mx")
        self.adj = construct_adj(self.adj, 3).to(self.device)

        self.embedding_dim = self.feature_dim
        self.num_of_features = self.feature_dim
        first_layer_embedding_size = config.get("first_layer_embedding_size", 64)
        if first_layer_embedding_size:
            self.first_layer_embedding = nn.Linear(self.num_of_features, first_layer_embedding_size)
            self.num_of_features = first_layer_embedding_size
        else:
            self.first_layer_embedding = None

        self.filter_list = config.get("filters", [[64, 64, 64], [64, 64, 64], [64, 64, 64], [64, 64, 64]])
        self.stsgcl_layers = nn.ModuleList()
        for idx, filters in enumerate(self.filter_list):
            self.stsgcl_layers.append(STSGCL(self.input_length, self.num_of_vertices,
                                             self.num_of_features, filters, self.module_type,
                                             activation=self.activation,
                                             temporal_emb=self.temporal_emb,
                                             spatial_emb=self.spatial_emb, config=config))
            self.input_length -= 2
            self.num_of_features = filters[-1]

        self.outputs = nn.ModuleList()
        for i in range(self.predict_length):
            self.outputs.append(OutputLayer(self.num_of_vertices, self.input_length, self.num_of_features,
                                            num_of_filters=128, predict_length=1, output_dim=self.output_dim))

    def forward(self, batch):
        data = batch['X']
        if data.shape[-1] > self.embedding_dim:
            data = data[:, :, :, 0:self.embedding_dim]
        if self.first_layer_embedding:
            data = torch.relu(self.first_layer_embedding(data))
        for stsgcl_layer in self.stsgcl_layers:
            data = stsgcl_layer(data, self.adj)
        need_concat = []
        for output_layer in self.outputs:
            need_concat.append(output_layer(data))
        data = torch.cat(need_concat, dim=1)
        return data


def compute():
    torch.manual_seed(0)
    n = 5
    a = (torch.rand(n, n) > 0.5).float()
    a = ((a + a.t()) > 0).float()
    config = {'device': torch.device('cpu'), 'input_window': 6, 'output_window': 2, 'act_type': 'GLU',
              'first_layer_embedding_size': 8, 'filters': [[8, 8, 8], [8, 8, 8]]}
    data_feature = {'num_nodes': n, 'feature_dim': 2, 'output_dim': 1, 'adj_mx': a}
    model = STSGCN(config, data_feature)
    batch = {'X': torch.randn(3, 6, n, 2), 'y': torch.randn(3, 2, n, 1)}
    y_pred = model(batch)
    loss = nn.functional.huber_loss(y_pred, batch['y'])
    loss.backward()
    return {k: p.grad for k, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
