# reference fix for 3302: TorchRL commit 2f8c118e3 (PR #2755) in the library modules
# (3302helpers_torchrl_probabilistic_fixed.py, 3302helpers_torchrl_specs_fixed.py): the hook binds the projection
# with `tensordict_out.set`, and Bounded._project clamps out of place.
import importlib
import os
import sys

import torch
from torch import nn
from torch.distributions import Normal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tdm = importlib.import_module("3302helpers_torchrl_tensordict")
specs = importlib.import_module("3302helpers_torchrl_specs_fixed")
probabilistic = importlib.import_module("3302helpers_torchrl_probabilistic_fixed")


class NormalParamExtractor(nn.Module):
    def forward(self, x):
        loc, scale = x.chunk(2, -1)
        return loc, nn.functional.softplus(scale) + 1e-4


def compute():
    torch.manual_seed(0)
    obs_dim, act_dim = 4, 2
    policy_net = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 2 * act_dim), NormalParamExtractor())
    action_spec = specs.Bounded(low=-1.0, high=1.0, shape=(act_dim,))
    actor = tdm.TensorDictSequential(
        tdm.TensorDictModule(policy_net, in_keys=["observation"], out_keys=["loc", "scale"]),
        probabilistic.SafeProbabilisticModule(
            in_keys=["loc", "scale"], out_keys=["action"], spec=action_spec, safe=True, distribution_class=Normal,
        ),
    )
    critic = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.Tanh(), nn.Linear(32, 1))
    for p in critic.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.Adam(policy_net.parameters(), lr=1e-3)

    probabilistic.set_interaction_type("random")
    td = tdm.TensorDict({"observation": torch.randn(16, obs_dim)}, batch_size=[16])
    td = actor(td)
    action = td.get("action")
    q_value = critic(torch.cat([td.get("observation"), action], -1))
    loss_actor = -q_value.mean()
    optimizer.zero_grad()
    loss_actor.backward()
    out = {
        "loss_actor": loss_actor.detach(),
        "action": action.detach().clone(),
        "policy.0.weight.grad": policy_net[0].weight.grad.clone(),
        "policy.2.weight.grad": policy_net[2].weight.grad.clone(),
        "policy.2.bias.grad": policy_net[2].bias.grad.clone(),
    }
    optimizer.step()
    out["policy.2.weight.after_step"] = policy_net[2].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
