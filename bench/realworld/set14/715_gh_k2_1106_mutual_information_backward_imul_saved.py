# source: https://github.com/k2-fsa/k2/pull/1106
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# k2's RNN-T losses (k2.rnnt_loss and friends) are built on MutualInformationRecursionFunction
# (715helpers_k2_mutual_information.py, k2/python/k2/mutual_information.py). Its backward scales the gradients it
# saved in forward in place, `px_grad *= ans_grad` / `py_grad *= ans_grad`, so a second backward through the same
# graph (`loss.backward(retain_graph=True)`, "useful when training with multiple optimizers") fails: "[torch.
# FloatTensor [2, 8, 17]] is at version 1; expected version 0". Merged PR #1106: `px_grad = px_grad * ans_grad`
# (715helpers_k2_mutual_information_fixed.py).
# Harness: two small "networks" produce the px/py log-odds of an RNN-T-like lattice (stand-in for get_rnnt_logprobs
# over an encoder/decoder); one loss, backpropagated once per optimizer as in the PR's use case (the first backward
# with retain_graph=True), then both steps. (check.py's clone-replay cannot model this case: the write happens inside
# backward, on the saved tensor the replay hands out twice, so its "differs" is expected.)
import os
import sys
from importlib import import_module

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
k2 = import_module("715helpers_k2_mutual_information")


def compute():
    torch.manual_seed(0)
    B, S, T, D = 2, 3, 4, 5
    encoder = nn.Linear(D, T + 1)
    decoder = nn.Linear(D, T)
    opt_enc = torch.optim.SGD(encoder.parameters(), lr=0.1)
    opt_dec = torch.optim.SGD(decoder.parameters(), lr=0.1)
    x_feats = torch.randn(B, S, D)
    y_feats = torch.randn(B, S + 1, D)

    px = torch.log_softmax(encoder(x_feats), dim=-1)   # [B][S][T+1]
    py = torch.log_softmax(decoder(y_feats), dim=-1)   # [B][S+1][T]
    scores = k2.mutual_information_recursion(px, py)
    loss = -scores.mean()

    opt_enc.zero_grad()
    loss.backward(retain_graph=True)
    enc_grads = {"encoder." + n: p.grad.clone() for n, p in encoder.named_parameters()}
    opt_dec.zero_grad()
    loss.backward()
    opt_enc.step()
    opt_dec.step()

    out = dict(enc_grads)
    out.update({"decoder." + n: p.grad.clone() for n, p in decoder.named_parameters()})
    out.update({"encoder_after." + n: p.detach().clone() for n, p in encoder.named_parameters()})
    out.update({"decoder_after." + n: p.detach().clone() for n, p in decoder.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
