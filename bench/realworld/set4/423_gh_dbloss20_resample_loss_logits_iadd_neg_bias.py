# source: https://github.com/wutong16/DistributionBalancedLoss/issues/20
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Distribution-Balanced Loss for multi-label classification (mllt/models/losses/resample_loss.py). ResampleLoss's
# negative-tolerant logit regularisation shifts the scores in place, `logits += self.neg_bias`, on the tensor the
# caller passed as cls_score. The reporter's classifier hands over a sigmoid output ("[torch.FloatTensor [64, 109]],
# which is output 0 of SigmoidBackward0, is at version 1; expected version 0" at loss.backward()); sigmoid keeps
# its output for backward, so the in-place shift breaks it. The ref shifts out of place, `logits = logits +
# self.neg_bias`, which is what the rest of the function already does for neg_scale.
# Assumption: the classifier ends in torch.sigmoid, as the error message shows (the repository's own heads return
# raw logits). The class frequencies come from a tensor instead of mmcv.load(freq_file), .cuda() calls dropped;
# ResampleLoss (rebalance weighting, focal, logit_reg), binary_cross_entropy and weight_reduce_loss are the
# repository's code.
import torch
import torch.nn as nn
import torch.nn.functional as F


def reduce_loss(loss, reduction):
    reduction_enum = F._Reduction.get_enum(reduction)
    # none: 0, elementwise_mean:1, sum: 2
    if reduction_enum == 0:
        return loss
    elif reduction_enum == 1:
        return loss.mean()
    elif reduction_enum == 2:
        return loss.sum()


def weight_reduce_loss(loss, weight=None, reduction='mean', avg_factor=None):
    # if weight is specified, apply element-wise weight
    if weight is not None:
        loss = loss * weight

    # if avg_factor is not specified, just reduce the loss
    if avg_factor is None:
        loss = reduce_loss(loss, reduction)
    else:
        # if reduction is mean, then average the loss by avg_factor
        if reduction == 'mean':
            loss = loss.sum() / avg_factor
        # if reduction is 'none', then do nothing, otherwise raise an error
        elif reduction != 'none':
            raise ValueError('avg_factor can not be used with reduction="sum"')
    return loss


def binary_cross_entropy(pred,
                         label,
                         weight=None,
                         reduction='mean',
                         avg_factor=None):
    # weighted element-wise losses
    if weight is not None:
        weight = weight.float()

    loss = F.binary_cross_entropy_with_logits(
        pred, label.float(), weight, reduction='none')
    loss = weight_reduce_loss(loss, reduction=reduction, avg_factor=avg_factor)

    return loss


class ResampleLoss(nn.Module):

    def __init__(self,
                 class_freq,
                 neg_class_freq,
                 use_sigmoid=True,
                 reduction='mean',
                 loss_weight=1.0,
                 focal=dict(
                     focal=True,
                     balance_param=2.0,
                     gamma=2,
                 ),
                 map_param=dict(
                     alpha=10.0,
                     beta=0.2,
                     gamma=0.1
                 ),
                 logit_reg=dict(
                     neg_scale=5.0,
                     neg_bias=0.1
                 ),
                 reweight_func='rebalance',
                 weight_norm=None):
        super(ResampleLoss, self).__init__()

        self.use_sigmoid = use_sigmoid
        self.loss_weight = loss_weight
        self.reduction = reduction
        self.cls_criterion = binary_cross_entropy

        # reweighting function
        self.reweight_func = reweight_func

        # normalization (optional)
        self.weight_norm = weight_norm

        # focal loss params
        self.focal = focal['focal']
        self.gamma = focal['gamma']
        self.balance_param = focal['balance_param']

        # mapping function params
        self.map_alpha = map_param['alpha']
        self.map_beta = map_param['beta']
        self.map_gamma = map_param['gamma']

        self.class_freq = class_freq.float()
        self.neg_class_freq = neg_class_freq.float()
        self.num_classes = self.class_freq.shape[0]
        self.train_num = self.class_freq[0] + self.neg_class_freq[0]
        # regularization params
        self.logit_reg = logit_reg
        self.neg_scale = logit_reg[
            'neg_scale'] if 'neg_scale' in logit_reg else 1.0
        neg_bias = logit_reg['neg_bias'] if 'neg_bias' in logit_reg else 0.0
        self.neg_bias = - torch.log(
            self.train_num / self.class_freq - 1) * neg_bias / self.neg_scale

        self.freq_inv = torch.ones(self.class_freq.shape) / self.class_freq
        self.propotion_inv = self.train_num / self.class_freq

    def forward(self,
                cls_score,
                label,
                weight=None,
                avg_factor=None,
                reduction_override=None,
                **kwargs):

        assert reduction_override in (None, 'none', 'mean', 'sum')
        reduction = (
            reduction_override if reduction_override else self.reduction)

        weight = self.reweight_functions(label)

        cls_score, weight = self.logit_reg_functions(label.float(), cls_score, weight)

        if self.focal:
            logpt = - self.cls_criterion(
                cls_score.clone(), label, weight=None, reduction='none',
                avg_factor=avg_factor)
            # pt is sigmoid(logit) for pos or sigmoid(-logit) for neg
            pt = torch.exp(logpt)
            loss = self.cls_criterion(
                cls_score, label.float(), weight=weight, reduction='none')
            loss = ((1 - pt) ** self.gamma) * loss
            loss = self.balance_param * loss
        else:
            loss = self.cls_criterion(cls_score, label.float(), weight,
                                      reduction=reduction)

        loss = self.loss_weight * loss
        return loss

    def reweight_functions(self, label):
        if self.reweight_func is None:
            return None
        elif self.reweight_func in 'rebalance':
            weight = self.rebalance_weight(label.float())
        else:
            return None

        if self.weight_norm is not None:
            if 'by_instance' in self.weight_norm:
                max_by_instance, _ = torch.max(weight, dim=-1, keepdim=True)
                weight = weight / max_by_instance
            elif 'by_batch' in self.weight_norm:
                weight = weight / torch.max(weight)

        return weight

    def logit_reg_functions(self, labels, logits, weight=None):
        if not self.logit_reg:
            return logits, weight
        if 'neg_bias' in self.logit_reg:
            logits += self.neg_bias
        if 'neg_scale' in self.logit_reg:
            logits = logits * (1 - labels) * self.neg_scale  + logits * labels
            weight = weight / self.neg_scale * (1 - labels) + weight * labels
        return logits, weight

    def rebalance_weight(self, gt_labels):
        repeat_rate = torch.sum( gt_labels.float() * self.freq_inv, dim=1, keepdim=True)
        pos_weight = self.freq_inv.clone().detach().unsqueeze(0) / repeat_rate
        # pos and neg are equally treated
        weight = torch.sigmoid(self.map_beta * (pos_weight - self.map_gamma)) + self.map_alpha
        return weight


class Classifier(nn.Module):
    """Small multi-label classifier ending in a sigmoid, like the reporter's (see header)."""

    def __init__(self, in_dim=20, num_classes=7):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, num_classes))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


def compute():
    torch.manual_seed(0)
    num_classes = 7
    class_freq = torch.tensor([120, 40, 15, 300, 8, 60, 22])
    neg_class_freq = 500 - class_freq
    model = Classifier(20, num_classes)
    criterion = ResampleLoss(class_freq, neg_class_freq)
    x = torch.randn(6, 20)
    label = (torch.rand(6, num_classes) > 0.6).long()
    label[:, 3] = 1  # every sample has at least one positive label (repeat_rate > 0)
    loss = criterion(model(x), label).mean()
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
