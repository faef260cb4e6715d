# source: https://github.com/kfzyqin/Implementation-MolGAN-PyTorch/issues/1
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# Implementation-MolGAN-PyTorch, solver_gan.py, Solver.train_or_valid, "3. Train the generator": the value network V
# scores the generator's soft molecules (edges_hat, nodes_hat), and the update is
# `train_step_G.backward(retain_graph=True); self.g_optimizer.step(); train_step_V.backward(); self.v_optimizer.step()`.
# The RMSprop step rewrites G's weights in place, and train_step_V's graph runs back through G, whose Linear layers
# saved those weights, so `train_step_V.backward()` fails ("one of the variables needed for gradient computation has
# been modified by an inplace operation", issue #1 on PyTorch 1.5; again #8 "[torch.FloatTensor [512, 45]], which is
# output 0 of TBackward, is at version 2; expected version 1", and #10). The repository has no fix commit; the
# reports were closed with "the closed issues have the answers". Before PyTorch 1.5 the optimizers wrote through
# `.data` and this code ran: the gradient V's loss put into G was thrown away by the next reset_grad().
# Stand-ins: the QM9 batch is a fixed random one-hot graph batch (4 graphs, 5 atoms, 3 atom types, 4 bond types);
# the RDKit rewards are fixed tensors; G and D/V are the repository's layer types reduced to one graph convolution
# layer and smaller widths, dropout 0; post_method 'softmax'; la = 0.5; one step at cur_step 0, so the critic update
# (taken when cur_step % n_critic != 0) and its gradient penalty are not run.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiDenseLayer(nn.Module):
    def __init__(self, aux_unit, linear_units, activation=None, dropout_rate=0.):
        super().__init__()
        layers = []
        for c0, c1 in zip([aux_unit] + linear_units[:-1], linear_units):
            layers.append(nn.Linear(c0, c1))
            layers.append(nn.Dropout(dropout_rate))
            layers.append(activation)
        self.linear_layer = nn.Sequential(*layers)

    def forward(self, inputs):
        return self.linear_layer(inputs)


class GraphConvolutionLayer(nn.Module):
    def __init__(self, in_features, u, activation, edge_type_num):
        super().__init__()
        self.edge_type_num = edge_type_num
        self.adj_list = nn.ModuleList([nn.Linear(in_features, u) for _ in range(edge_type_num)])
        self.linear_2 = nn.Linear(in_features, u)
        self.activation = activation

    def forward(self, n_tensor, adj_tensor):
        output = torch.stack([self.adj_list[i](n_tensor) for i in range(self.edge_type_num)], 1)
        output = torch.matmul(adj_tensor, output)
        output = torch.sum(output, 1) + self.linear_2(n_tensor)
        return self.activation(output)


class GraphAggregation(nn.Module):
    def __init__(self, in_features, aux_units, activation):
        super().__init__()
        self.i = nn.Sequential(nn.Linear(in_features, aux_units), nn.Sigmoid())
        self.j = nn.Sequential(nn.Linear(in_features, aux_units), activation)
        self.activation = activation

    def forward(self, n_tensor, out_tensor):
        annotations = torch.cat((n_tensor, out_tensor), -1)
        output = torch.mul(self.i(annotations), self.j(annotations))
        return self.activation(torch.sum(output, 1))


class Generator(nn.Module):
    def __init__(self, conv_dims, z_dim, vertexes, edges, nodes):
        super().__init__()
        self.activation_f = nn.Tanh()
        self.multi_dense_layer = MultiDenseLayer(z_dim, conv_dims, self.activation_f)
        self.vertexes, self.edges, self.nodes = vertexes, edges, nodes
        self.edges_layer = nn.Linear(conv_dims[-1], edges * vertexes * vertexes)
        self.nodes_layer = nn.Linear(conv_dims[-1], vertexes * nodes)

    def forward(self, x):
        output = self.multi_dense_layer(x)
        edges_logits = self.edges_layer(output).view(-1, self.edges, self.vertexes, self.vertexes)
        edges_logits = (edges_logits + edges_logits.permute(0, 1, 3, 2)) / 2
        edges_logits = edges_logits.permute(0, 2, 3, 1)
        nodes_logits = self.nodes_layer(output).view(-1, self.vertexes, self.nodes)
        return edges_logits, nodes_logits


class Discriminator(nn.Module):
    def __init__(self, graph_conv_dim, aux_dim, linear_dim, m_dim, b_dim):
        super().__init__()
        self.activation_f = nn.Tanh()
        self.gcn_layer = GraphConvolutionLayer(m_dim, graph_conv_dim, self.activation_f, b_dim)
        self.agg_layer = GraphAggregation(graph_conv_dim + m_dim, aux_dim, self.activation_f)
        self.multi_dense_layer = MultiDenseLayer(aux_dim, linear_dim, self.activation_f)
        self.output_layer = nn.Linear(linear_dim[-1], 1)

    def forward(self, adj, hidden, node, activation=None):
        adj = adj[:, :, :, 1:].permute(0, 3, 1, 2)
        h_1 = self.gcn_layer(node, adj)
        h = self.agg_layer(node, h_1)
        h = self.multi_dense_layer(h)
        output = self.output_layer(h)
        output = activation(output) if activation is not None else output
        return output, h


def postprocess(inputs, temperature=1.):
    return [F.softmax(e_logits / temperature, -1) for e_logits in inputs]


def compute():
    torch.manual_seed(0)
    vertexes, b_dim, m_dim, z_dim = 5, 4, 3, 8
    G = Generator([16, 32], z_dim, vertexes, b_dim, m_dim)
    D = Discriminator(8, 16, [16, 8], m_dim, b_dim - 1)
    V = Discriminator(8, 16, [16, 8], m_dim, b_dim - 1)
    g_optimizer = torch.optim.RMSprop(G.parameters(), 1e-3)
    d_optimizer = torch.optim.RMSprop(D.parameters(), 1e-3)
    v_optimizer = torch.optim.RMSprop(V.parameters(), 1e-3)

    def reset_grad():
        g_optimizer.zero_grad()
        d_optimizer.zero_grad()
        v_optimizer.zero_grad()

    a = torch.randint(0, b_dim, (4, vertexes, vertexes))
    a = torch.triu(a, 1) + torch.triu(a, 1).transpose(1, 2)
    x = torch.randint(0, m_dim, (4, vertexes))
    a_tensor = F.one_hot(a, b_dim).float()
    x_tensor = F.one_hot(x, m_dim).float()
    z = torch.randn(4, z_dim)
    reward_r = torch.tensor([[0.7], [0.2], [0.5], [0.9]])
    reward_f = torch.tensor([[0.1], [0.4], [0.3], [0.6]])
    cur_la, n_critic, cur_step = 0.5, 5, 0

    logits_real, features_real = D(a_tensor, None, x_tensor)

    # 3. Train the generator
    edges_logits, nodes_logits = G(z)
    (edges_hat, nodes_hat) = postprocess((edges_logits, nodes_logits))
    logits_fake, features_fake = D(edges_hat, None, nodes_hat)

    value_logit_real, _ = V(a_tensor, None, x_tensor, torch.sigmoid)
    value_logit_fake, _ = V(edges_hat, None, nodes_hat, torch.sigmoid)

    loss_G = -logits_fake
    loss_V = torch.abs(value_logit_real - reward_r) + torch.abs(value_logit_fake - reward_f)
    loss_RL = -value_logit_fake

    loss_G = torch.mean(loss_G)
    loss_V = torch.mean(loss_V)
    loss_RL = torch.mean(loss_RL)

    alpha = torch.abs(loss_G.detach() / loss_RL.detach()).detach()
    train_step_G = cur_la * loss_G + (1 - cur_la) * alpha * loss_RL
    train_step_V = loss_V

    reset_grad()

    # Optimise generator.
    if cur_step % n_critic == 0:
        train_step_G.backward(retain_graph=True)
        g_optimizer.step()

    # Optimise value network.
    if cur_step % n_critic == 0:
        train_step_V.backward()
        v_optimizer.step()

    out = {"G." + n: p.detach().clone() for n, p in G.named_parameters()}
    out.update({"V." + n: p.detach().clone() for n, p in V.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
