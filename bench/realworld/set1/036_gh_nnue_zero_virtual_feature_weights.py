# source: https://github.com/official-stockfish/nnue-pytorch/pull/75
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# NNUE._zero_virtual_feature_weights writes `weights[a:b, :] = 0.0` into self.input.weight (a leaf Parameter)
# with grad mode on ("a view of a leaf Variable that requires grad is being used in an in-place operation").
# Trimmed: pytorch_lightning base replaced by nn.Module, dense inputs instead of the sparse batch loader.
import torch
from torch import nn

L1 = 16
L2 = 8
L3 = 8


class FeatureSet:
  def __init__(self, num_real_features, num_virtual_features):
    self.num_real_features = num_real_features
    self.num_virtual_features = num_virtual_features
    self.num_features = num_real_features + num_virtual_features

  def get_virtual_feature_ranges(self):
    return [(self.num_real_features, self.num_features)]


class NNUE(nn.Module):
  def __init__(self, feature_set, lambda_=1.0):
    super(NNUE, self).__init__()
    self.input = nn.Linear(feature_set.num_features, L1)
    self.feature_set = feature_set
    self.l1 = nn.Linear(2 * L1, L2)
    self.l2 = nn.Linear(L2, L3)
    self.output = nn.Linear(L3, 1)
    self.lambda_ = lambda_

    self._zero_virtual_feature_weights()

  '''
  We zero all virtual feature weights because during serialization to .nnue
  we compute weights for each real feature as being the sum of the weights for
  the real feature in question and the virtual features it can be factored to.
  '''
  def _zero_virtual_feature_weights(self):
    weights = self.input.weight
    for a, b in self.feature_set.get_virtual_feature_ranges():
      weights[a:b, :] = 0.0
    self.input.weight = nn.Parameter(weights)

  def forward(self, us, them, w_in, b_in):
    w = self.input(w_in)
    b = self.input(b_in)
    l0_ = (us * torch.cat([w, b], dim=1)) + (them * torch.cat([b, w], dim=1))
    # clamp here is used as a clipped relu to (0.0, 1.0)
    l0_ = torch.clamp(l0_, 0.0, 1.0)
    l1_ = torch.clamp(self.l1(l0_), 0.0, 1.0)
    l2_ = torch.clamp(self.l2(l1_), 0.0, 1.0)
    x = self.output(l2_)
    return x


def compute():
  torch.manual_seed(0)
  model = NNUE(FeatureSet(8, 4))
  batch = 5
  us = torch.randint(0, 2, (batch, 1)).float()
  them = 1.0 - us
  w_in = (torch.rand(batch, 12) > 0.7).float()
  b_in = (torch.rand(batch, 12) > 0.7).float()
  target = torch.rand(batch, 1)
  q = model(us, them, w_in, b_in)
  loss = torch.pow(torch.sigmoid(q) - target, 2).mean()
  loss.backward()
  return {name: p.grad for name, p in model.named_parameters()}


if __name__ == "__main__":
  compute()
