# source: https://github.com/awslabs/sockeye/commit/006f01b11b867463ad90e964684acb751c7b442b
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Sockeye (neural machine translation), sockeye/transformer_pt.py during the port to PyTorch (Sockeye 3), at the
# fix's parent. PyTorchTransformerFeedForward is ff1 -> activation -> dropout -> ff2; the activation comes from
# layers_pt.pytorch_get_activation(act_type, inplace=inference_only), for the default act_type "relu" an
# out-of-place `nn.ReLU()` when training (ReluBackward0 saves its result), but the dropout was built with
# `pt.nn.Dropout(p=self.dropout, inplace=True)` whatever the mode, so in training it scales the ReLU's saved
# output in place and `loss.backward()` raises "one of the variables needed for gradient computation has been
# modified by an inplace operation". Fix (commit 006f01b1 "Switch 'inplace' mode off for training to enable backward
# pass"): `pt.nn.Dropout(p=self.dropout, inplace=inference_only)` (the decoder's final dropout and the int8
# quantisation got the same switch).
# Reduced (written anew, not copied): one PyTorchTransformerEncoderBlock with its pre/post process blocks (sequence
# "n" before, "dr" after, as Sockeye's defaults) around the feed-forward sub-layer; stand-in: the self-attention
# sub-layer is left out (its own dropouts are out of place and it is not on the failing path); no GLU, no LHUC.
# Sizes: model 16, hidden 32, dropout_act 0.1, dropout_prepost 0.1; input (length 7, batch 3, 16), loss = mean of
# squares. compute() returns the block's output and the gradients of the feed-forward and layer-norm weights.
from typing import Optional

import torch as pt


def pytorch_get_activation(act_type: str, inplace: bool = False) -> pt.nn.Module:
    if act_type == "swish1":
        return pt.nn.SiLU(inplace=inplace)
    if act_type == "gelu":
        return pt.nn.GELU()
    return pt.nn.ReLU(inplace=inplace)


class PyTorchTransformerProcessBlock(pt.nn.Module):
    def __init__(self, sequence: str, dropout: float, num_hidden: int = 0) -> None:
        super().__init__()
        self.sequence = sequence
        self.layer_norm = None
        if 'n' in sequence:
            self.layer_norm = pt.nn.LayerNorm(num_hidden, eps=1e-06)
        self.dropout = dropout
        self.dropout_layer = None  # type: Optional[pt.nn.Module]
        if dropout > 0.0:
            self.dropout_layer = pt.nn.Dropout(p=dropout)

    def forward(self, data: pt.Tensor, prev: Optional[pt.Tensor] = None) -> pt.Tensor:
        if not self.sequence:
            return data
        for step in self.sequence:
            if step == "r":
                data = data + prev
            elif step == "n":
                data = self.layer_norm(data)
            elif step == "d":
                if self.dropout_layer is not None and self.dropout > 0.0:
                    data = self.dropout_layer(data)
            else:
                raise ValueError("Unknown step in sequence: %s" % step)
        return data


class PyTorchTransformerFeedForward(pt.nn.Module):
    def __init__(self, num_hidden: int, num_model: int, act_type: str, dropout: float,
                 use_glu: bool = False, inference_only: bool = False) -> None:
        super().__init__()
        self.dropout = dropout
        self.use_glu = use_glu
        self.ff1 = pt.nn.Linear(in_features=num_model, out_features=num_hidden)
        self.act = pytorch_get_activation(act_type, inplace=inference_only)
        if self.use_glu:
            self.linear = pt.nn.Linear(in_features=num_model, out_features=num_hidden)
        if self.dropout > 0.0:
            self.drop = pt.nn.Dropout(p=self.dropout, inplace=True)
        self.ff2 = pt.nn.Linear(in_features=num_hidden, out_features=num_model)

    def forward(self, x):
        h = self.ff1(x)
        h = self.act(h)
        if self.use_glu:
            h = h * self.linear(x)
        if self.dropout > 0.0:
            h = self.drop(h)
        y = self.ff2(h)
        return y


class PyTorchTransformerEncoderBlock(pt.nn.Module):
    def __init__(self, model_size=16, feed_forward_num_hidden=32, act_type="relu", dropout_act=0.1,
                 dropout_prepost=0.1, preprocess_sequence="n", postprocess_sequence="dr",
                 inference_only: bool = False) -> None:
        super().__init__()
        self.pre_ff = PyTorchTransformerProcessBlock(sequence=preprocess_sequence, dropout=dropout_prepost,
                                                     num_hidden=model_size)
        self.ff = PyTorchTransformerFeedForward(num_hidden=feed_forward_num_hidden, num_model=model_size,
                                                act_type=act_type, dropout=dropout_act,
                                                inference_only=inference_only)
        self.post_ff = PyTorchTransformerProcessBlock(sequence=postprocess_sequence, dropout=dropout_prepost,
                                                      num_hidden=model_size)

    def forward(self, data: pt.Tensor) -> pt.Tensor:
        data_ff = self.ff(self.pre_ff(data))
        data = self.post_ff(data_ff, data)
        return data


def compute():
    pt.manual_seed(0)
    block = PyTorchTransformerEncoderBlock()
    block.train()
    data = pt.randn(7, 3, 16)
    out = block(data)
    loss = (out ** 2).mean()
    loss.backward()
    return {
        "out": out.detach(),
        "ff1.weight.grad": block.ff.ff1.weight.grad,
        "ff2.weight.grad": block.ff.ff2.weight.grad,
        "pre_ff.layer_norm.weight.grad": block.pre_ff.layer_norm.weight.grad,
    }
