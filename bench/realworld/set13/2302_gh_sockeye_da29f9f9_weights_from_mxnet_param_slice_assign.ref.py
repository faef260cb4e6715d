# source: https://github.com/awslabs/sockeye/commit/da29f9f9cfb287ceb413f6c4bcd6b503cf799bea
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Sockeye (neural machine translation) while it was ported from MXNet to PyTorch: every PyTorch block has a
# `weights_from_mxnet_block(block_mx)` that copies the MXNet block's trained parameters into its own, written as
# `self.weight[:] = pt.as_tensor(block_mx.weight.data().asnumpy())` (layers_pt.PyTorchOutputLayer, the transformer's
# feed-forward `self.ff1.weight[:] = ...`, the process blocks' layer norms, the attention projections, the
# embeddings). The parameters are leaves that require grad, so the slice assignment raises "a leaf Variable that
# requires grad is being used in an in-place operation" (torch 2.13's wording; older releases said "a view of a
# leaf"). Fix (commit da29f9f9 "Compatibility with pytorch 1.9"): every such line writes through `.data`:
# `self.weight.data[:] = pt.as_tensor(...)`.
# Reduced (written anew, not copied): the feed-forward block (ff1, ReLU, ff2) and the output layer (a Parameter
# weight and bias used with F.linear, as PyTorchOutputLayer), each with its weights_from_mxnet_block; stand-ins:
# MXNet is not installed (nor numpy), so an MXNet block is a plain object whose parameters answer `.data()` with an
# array whose `.asnumpy()` gives a torch tensor (seeded random values standing for the trained MXNet weights); no
# dropout, GLU or vocabulary selection. Harness: build the PyTorch model, copy the "MXNet" weights into it as the
# conversion does, then one training loss (cross entropy over the vocabulary) and its backward. compute() returns the
# copied weights and the gradients.
import math

import torch as pt


class _NDArray:  # stand-in for mxnet.nd.NDArray
    def __init__(self, value):
        self._value = value

    def asnumpy(self):
        return self._value


class _MxParameter:  # stand-in for mxnet.gluon.Parameter
    def __init__(self, *shape):
        self._value = pt.randn(*shape)

    def data(self):
        return _NDArray(self._value)


class _MxDense:
    def __init__(self, units, in_units):
        self.weight = _MxParameter(units, in_units)
        self.bias = _MxParameter(units)


class _MxFeedForward:
    def __init__(self, num_hidden, num_model):
        self.ff1 = _MxDense(num_hidden, num_model)
        self.ff2 = _MxDense(num_model, num_hidden)


class PyTorchTransformerFeedForward(pt.nn.Module):
    def __init__(self, num_hidden: int, num_model: int) -> None:
        super().__init__()
        self.ff1 = pt.nn.Linear(in_features=num_model, out_features=num_hidden)
        self.act = pt.nn.ReLU()
        self.ff2 = pt.nn.Linear(in_features=num_hidden, out_features=num_model)

    def forward(self, x):
        return self.ff2(self.act(self.ff1(x)))

    def weights_from_mxnet_block(self, block_mx):
        self.ff1.weight.data[:] = pt.as_tensor(block_mx.ff1.weight.data().asnumpy())
        self.ff2.weight.data[:] = pt.as_tensor(block_mx.ff2.weight.data().asnumpy())
        self.ff1.bias.data[:] = pt.as_tensor(block_mx.ff1.bias.data().asnumpy())
        self.ff2.bias.data[:] = pt.as_tensor(block_mx.ff2.bias.data().asnumpy())


class PyTorchOutputLayer(pt.nn.Module):
    def __init__(self, hidden_size: int, vocab_size: int) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.in_features = hidden_size
        self.out_features = vocab_size
        self.weight = pt.nn.Parameter(pt.Tensor(vocab_size, hidden_size))
        self.bias = pt.nn.Parameter(pt.Tensor(vocab_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        pt.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        fan_in, _ = pt.nn.init._calculate_fan_in_and_fan_out(self.weight)
        bound = 1 / math.sqrt(fan_in)
        pt.nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, data: pt.Tensor) -> pt.Tensor:
        return pt.nn.functional.linear(data, self.weight, self.bias)

    def weights_from_mxnet_block(self, block_mx):
        self.weight.data[:] = pt.as_tensor(block_mx.weight.data().asnumpy())
        self.bias.data[:] = pt.as_tensor(block_mx.bias.data().asnumpy())


def compute():
    pt.manual_seed(0)
    num_model, num_hidden, vocab = 8, 16, 11
    ff_mx = _MxFeedForward(num_hidden, num_model)
    out_mx = _MxDense(vocab, num_model)

    ff = PyTorchTransformerFeedForward(num_hidden, num_model)
    output_layer = PyTorchOutputLayer(num_model, vocab)
    ff.weights_from_mxnet_block(ff_mx)
    output_layer.weights_from_mxnet_block(out_mx)

    data = pt.randn(5, num_model)
    labels = pt.randint(0, vocab, (5,))
    logits = output_layer(ff(data))
    loss = pt.nn.functional.cross_entropy(logits, labels)
    loss.backward()
    return {
        "ff1.weight": ff.ff1.weight.detach(),
        "output.weight": output_layer.weight.detach(),
        "ff1.weight.grad": ff.ff1.weight.grad,
        "ff2.bias.grad": ff.ff2.bias.grad,
        "output.weight.grad": output_layer.weight.grad,
        "output.bias.grad": output_layer.bias.grad,
    }
