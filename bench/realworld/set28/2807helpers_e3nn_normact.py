# Library module for case 2807 (the library side, unchanged by the fix).
# e3nn/e3nn, e3nn/nn/normact.py, read at the parent of commit 7b23cd5 ("fix normact tests", 2021-03-07). Written anew
# at small size (not copied): NormActivation (its learnable `biases` Parameter of one entry per irrep, the clamped
# norms, the nonlinearity of norm + bias divided by the norm, the per-irrep scaling of the features) follows the source.
# Stand-ins for what it imports from e3nn.o3: Irreps (parsed from strings such as "4x0e + 5x1o" into (mul, l) pairs
# with dim and num_irreps), Norm (the Euclidean norm of each irrep's 2l+1 components; the source computes it as
# sqrt(TensorProduct(x, x)) with component normalisation, which is the same for these irreps) and
# ElementwiseTensorProduct of the scalars with the input (each irrep's components times its scalar); the
# compile_mode decorator is left out.
import torch


class Irreps(list):
    def __init__(self, s):
        if isinstance(s, Irreps):
            super().__init__(s)
            return
        items = []
        for term in s.split('+'):
            mul, ir = term.strip().split('x')
            items.append((int(mul), int(ir[:-1])))
        super().__init__(items)

    @property
    def dim(self):
        return sum(mul * (2 * l + 1) for mul, l in self)

    @property
    def num_irreps(self):
        return sum(mul for mul, _ in self)


class o3:
    Irreps = Irreps

    class Norm(torch.nn.Module):
        def __init__(self, irreps_in):
            super().__init__()
            self.irreps_in = Irreps(irreps_in)
            self.irreps_out = Irreps(" + ".join("%dx0e" % mul for mul, _ in self.irreps_in))

        def forward(self, features):
            out, i = [], 0
            for mul, l in self.irreps_in:
                d = 2 * l + 1
                x = features[..., i:i + mul * d].reshape(*features.shape[:-1], mul, d)
                out.append(x.pow(2).sum(-1))
                i += mul * d
            return torch.cat(out, dim=-1).sqrt()

    class ElementwiseTensorProduct(torch.nn.Module):
        def __init__(self, irreps_in1, irreps_in2):
            super().__init__()
            self.irreps_in2 = Irreps(irreps_in2)

        def forward(self, scalars, features):
            out, i, j = [], 0, 0
            for mul, l in self.irreps_in2:
                d = 2 * l + 1
                x = features[..., i:i + mul * d].reshape(*features.shape[:-1], mul, d)
                out.append((scalars[..., j:j + mul, None] * x).reshape(*features.shape[:-1], mul * d))
                i += mul * d
                j += mul
            return torch.cat(out, dim=-1)


class NormActivation(torch.nn.Module):
    r"""Norm-based activation function: a scalar nonlinearity of the norm of each irrep, times the normalised irrep."""

    def __init__(self, irreps_in, scalar_nonlinearity, normalize=True, epsilon=1e-8, bias=False):
        super().__init__()
        self.irreps_in = o3.Irreps(irreps_in)
        self.irreps_out = o3.Irreps(irreps_in)
        self.norm = o3.Norm(irreps_in)
        self.scalar_nonlinearity = scalar_nonlinearity
        self.register_buffer('epsilon', torch.as_tensor(epsilon))
        self.normalize = normalize
        self.bias = bias
        if self.bias:
            self.biases = torch.nn.Parameter(torch.zeros(self.irreps_in.num_irreps))
        self.scalar_multiplier = o3.ElementwiseTensorProduct(irreps_in1=self.norm.irreps_out, irreps_in2=irreps_in)

    def forward(self, features):
        norms = self.norm(features)
        # Apply nonlinearity
        if self.normalize:
            epsilon_norms = norms.clone()
            epsilon_norms[epsilon_norms < self.epsilon] = self.epsilon
            nonlin_arg = epsilon_norms
            if self.bias:
                nonlin_arg = nonlin_arg + self.biases
            scalings = self.scalar_nonlinearity(nonlin_arg) / epsilon_norms
        else:
            nonlin_arg = norms
            if self.bias:
                nonlin_arg = nonlin_arg + self.biases
            scalings = self.scalar_nonlinearity(nonlin_arg)
        return self.scalar_multiplier(scalings, features)
