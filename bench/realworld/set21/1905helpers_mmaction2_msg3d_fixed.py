# mmaction2 projects/msg3d/models/msg3d_utils.py after commit bc906447 ("fix autograd bug"), which returns
# `self.act(out)` when `res == 0` and `self.act(out + res)` otherwise: MLP and ST_MSGCN (the spatial-temporal multi-scale graph convolution of MS-G3D skeleton action recognition), copied.
# The culprit: ST_MSGCN.forward ends with `out = self.mlp(agg)`, `out += res`, `return self.act(out)`; the MLP ends in
# a ReLU, whose backward saved its output; with the default `residual=False`, `res` is the integer 0 and the in-place
# add still writes the saved tensor.
# Stand-ins: numpy (not installed with the benchmark's torch) is a namespace of the five calls the module makes (eye,
# tile, stack, ndarray, copy as `clone`), on torch tensors; mmaction's k_adjacency and normalize_digraph
# (mmaction/models/utils/graph.py) are re-written with torch, same formulas; mmengine's BaseModule / ModuleList and
# mmcv's build_activation_layer (dict(type='ReLU') -> nn.ReLU()) are the plain torch ones.
import torch
import torch.nn as nn


class np:  # stand-in for numpy on torch tensors (see the header)
    ndarray = torch.Tensor

    @staticmethod
    def eye(n, dtype=None):
        return torch.eye(n, dtype=dtype)

    @staticmethod
    def tile(a, reps):
        return a.repeat(*reps)

    @staticmethod
    def stack(arrays):
        return torch.stack(list(arrays))


def k_adjacency(A, k, with_self=False, self_factor=1):  # stand-in: mmaction.models.utils.graph.k_adjacency in torch
    Iden = torch.eye(len(A), dtype=A.dtype)
    if k == 0:
        return Iden
    Ak = torch.clamp(torch.linalg.matrix_power(A + Iden, k), max=1) - torch.clamp(
        torch.linalg.matrix_power(A + Iden, k - 1), max=1)
    if with_self:
        Ak += (self_factor * Iden)
    return Ak


def normalize_digraph(A, dim=0):  # stand-in: mmaction.models.utils.graph.normalize_digraph in torch
    Dl = A.sum(dim)
    h, w = A.shape
    Dn = torch.zeros((w, w), dtype=A.dtype)
    for i in range(w):
        if Dl[i] > 0:
            Dn[i, i] = Dl[i]**(-1)
    return A @ Dn


def build_activation_layer(cfg):  # stand-in for mmcv.cnn.build_activation_layer
    assert cfg['type'] == 'ReLU'
    return nn.ReLU(inplace=cfg.get('inplace', False))


BaseModule = nn.Module  # stand-in for mmengine.model.BaseModule
ModuleList = nn.ModuleList  # stand-in for mmengine.model.ModuleList


class MLP(BaseModule):

    def __init__(self,
                 in_channels,
                 out_channels,
                 act_cfg=dict(type='ReLU'),
                 dropout=0):
        super().__init__()
        channels = [in_channels] + out_channels
        self.layers = ModuleList()
        for i in range(1, len(channels)):
            if dropout > 1e-3:
                self.layers.append(nn.Dropout(p=dropout))
            self.layers.append(
                nn.Conv2d(channels[i - 1], channels[i], kernel_size=1))
            self.layers.append(nn.BatchNorm2d(channels[i]))
            if act_cfg:
                self.layers.append(build_activation_layer(act_cfg))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class ST_MSGCN(BaseModule):

    def __init__(self,
                 in_channels,
                 out_channels,
                 A,
                 num_scales,
                 window_size,
                 residual=False,
                 dropout=0,
                 act_cfg=dict(type='ReLU')):

        super().__init__()
        self.num_scales = num_scales
        self.window_size = window_size
        A = self.build_st_graph(A, window_size)

        A_scales = [
            k_adjacency(A, k, with_self=True) for k in range(num_scales)
        ]
        A_scales = np.stack([normalize_digraph(g) for g in A_scales])

        self.register_buffer('A', torch.Tensor(A_scales))
        self.V = len(A)

        self.PA = nn.Parameter(self.A.clone())
        nn.init.uniform_(self.PA, -1e-6, 1e-6)

        self.mlp = MLP(
            in_channels * num_scales, [out_channels],
            dropout=dropout,
            act_cfg=act_cfg)

        # Residual connection
        if not residual:
            self.residual = lambda x: 0
        elif (in_channels == out_channels):
            self.residual = lambda x: x
        else:
            self.residual = MLP(in_channels, [out_channels], act_cfg=None)

        self.act = build_activation_layer(act_cfg)

    def build_st_graph(self, A, window_size):
        if not isinstance(A, np.ndarray):
            A = A.data.cpu().numpy()

        assert len(A.shape) == 2 and A.shape[0] == A.shape[1]
        V = len(A)
        A_with_I = A + np.eye(V, dtype=A.dtype)

        A_large = np.tile(A_with_I, (window_size, window_size)).clone()  # stand-in: numpy's .copy()
        return A_large

    def forward(self, x):
        N, C, T, V = x.shape  # T = number of windows, V = self.V * window_size
        A = self.A + self.PA

        # Perform Graph Convolution
        res = self.residual(x)
        agg = torch.einsum('kvu,nctv->nkctu', A, x)
        agg = agg.reshape(N, self.num_scales * C, T, V)
        out = self.mlp(agg)
        if res == 0:
            return self.act(out)
        else:
            return self.act(out + res)
