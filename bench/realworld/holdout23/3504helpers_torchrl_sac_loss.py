# Library module for case 3504 (shared by the original and the reference; the fix is in the training loop):
# a stand-in for torchrl's SACLoss (pytorch/rl torchrl/objectives/sac.py, loss version 2) reduced to what the
# failing loop touches, without tensordict: the Q-value networks' parameters stacked over num_qvalue_nets and run
# with torch.func (the source's `_vmap_qnetworkN0` over `qvalue_network_params`), the actor loss run on
# `_cached_detached_qvalue_params` (the source's `self.qvalue_network_params.detach()`, which shares storage and
# version counter with the trained parameters), the no-grad v2 target from target Q parameters, and the alpha loss
# on `log_alpha`. The actor's TanhNormal is a Normal through a tanh transform; losses are reduced by mean and the
# Q loss is the source's default smooth-L1 distance.
import copy

import torch
from torch import nn
from torch.distributions import Normal, TransformedDistribution
from torch.distributions.transforms import TanhTransform
from torch.func import functional_call, stack_module_state, vmap


class SACLoss(nn.Module):
    def __init__(self, actor_network, qvalue_network, num_qvalue_nets=2, target_entropy=-1.0, gamma=0.99,
                 alpha_init=1.0):
        super().__init__()
        self.actor_network = actor_network
        self.num_qvalue_nets = num_qvalue_nets
        qnets = [copy.deepcopy(qvalue_network) for _ in range(num_qvalue_nets)]
        for q in qnets[1:]:
            for p in q.parameters():
                nn.init.normal_(p, std=0.3)
        params, _ = stack_module_state(qnets)
        self.qvalue_network_params = nn.ParameterDict({k.replace(".", "__"): nn.Parameter(v) for k, v in params.items()})
        self.target_qvalue_network_params = {k: v.detach().clone() for k, v in self.qvalue_network_params.items()}
        self._qvalue_base = copy.deepcopy(qvalue_network).to("meta")
        self.log_alpha = nn.Parameter(torch.tensor(float(alpha_init)).log())
        self.target_entropy = target_entropy
        self.gamma = gamma

    @property
    def _cached_detached_qvalue_params(self):
        return {k: v.detach() for k, v in self.qvalue_network_params.items()}

    def _vmap_qnetworkN0(self, obs, action, params):
        def call(p, o, a):
            return functional_call(self._qvalue_base, {k.replace("__", "."): v for k, v in p.items()}, (o, a))
        return vmap(call, in_dims=(0, None, None))(dict(params), obs, action)

    @property
    def _alpha(self):
        with torch.no_grad():
            alpha = self.log_alpha.exp()
        return alpha

    def _dist(self, obs):
        loc, scale = self.actor_network(obs).chunk(2, -1)
        scale = nn.functional.softplus(scale) + 1e-4
        return TransformedDistribution(Normal(loc, scale), [TanhTransform(cache_size=1)])

    def _compute_target_v2(self, obs, action, reward, next_obs, done):
        with torch.no_grad():
            next_dist = self._dist(next_obs)
            next_action = next_dist.rsample()
            next_log_prob = next_dist.log_prob(next_action).sum(-1, keepdim=True)
            q = self._vmap_qnetworkN0(next_obs, next_action, self.target_qvalue_network_params)
            next_state_value = (q - self._alpha * next_log_prob).min(0)[0]
            return (reward + self.gamma * (1.0 - done) * next_state_value).squeeze(-1)

    def qvalue_v2_loss(self, batch):
        target_value = self._compute_target_v2(*batch)
        obs, action = batch[0], batch[1]
        pred_val = self._vmap_qnetworkN0(obs, action, self.qvalue_network_params).squeeze(-1)
        loss_qval = nn.functional.smooth_l1_loss(pred_val, target_value.expand_as(pred_val), reduction="none")
        return loss_qval.sum(0).mean()

    def actor_loss(self, batch):
        obs = batch[0]
        dist = self._dist(obs)
        a_reparm = dist.rsample()
        log_prob = dist.log_prob(a_reparm).sum(-1)
        q = self._vmap_qnetworkN0(obs, a_reparm, self._cached_detached_qvalue_params)
        min_q_logprob = q.min(0)[0].squeeze(-1)
        loss_actor = (self._alpha * log_prob - min_q_logprob).mean()
        return loss_actor, log_prob.detach()

    def _alpha_loss(self, log_prob):
        return (-self.log_alpha * (log_prob + self.target_entropy)).mean()

    def forward(self, batch):
        loss_qvalue = self.qvalue_v2_loss(batch)
        loss_actor, log_prob = self.actor_loss(batch)
        loss_alpha = self._alpha_loss(log_prob)
        return {"loss_actor": loss_actor, "loss_qvalue": loss_qvalue, "loss_alpha": loss_alpha}
