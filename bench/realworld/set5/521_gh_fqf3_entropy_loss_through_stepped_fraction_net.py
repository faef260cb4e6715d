# source: https://github.com/toshikwa/fqf-iqn-qrdqn.pytorch/issues/3
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# FQFAgent.learn() (fqf_iqn_qrdqn/agent/fqf_agent.py): one forward gives taus / entropies from the fraction
# proposal network; update_params(fraction_optim, fraction_loss + entropy_loss, retain_graph=True) steps the
# fraction network in place, then update_params(quantile_optim, quantile_loss + entropy_loss) backpropagates the
# same entropy_loss through the stepped fraction network -> "one of the variables needed for gradient
# computation has been modified by an inplace operation" on torch >= 1.5 (two optimizers in one step).
# The author's fix (commit "Bump torch up to 1.5.0"): the quantile update uses quantile_loss only, and the
# fractions are computed from state_embeddings.detach() ("networks other than the fraction network should never
# be trained on entropy loss"), so the DQN trunk no longer gets the entropy / fraction gradients (differs).
# network.py / model / utils live in 521helpers_fqf.py; the Atari replay memory is a fixed random batch; two
# learning steps with N=8 fractions.
import importlib.util
import os

import torch
from torch.optim import Adam, RMSprop

_spec = importlib.util.spec_from_file_location(
    "fqf", os.path.join(os.path.dirname(os.path.abspath(__file__)), "521helpers_fqf.py"))
_fqf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fqf)
FQF, update_params = _fqf.FQF, _fqf.update_params
calculate_quantile_huber_loss = _fqf.calculate_quantile_huber_loss
evaluate_quantile_at_action = _fqf.evaluate_quantile_at_action


class RandomMemory:
    def __init__(self, gen, num_actions):
        self.gen, self.num_actions = gen, num_actions

    def sample(self, batch_size):
        g = self.gen
        return (torch.rand(batch_size, 4, 84, 84, generator=g), torch.randint(0, self.num_actions, (batch_size, 1), generator=g),
                torch.randn(batch_size, 1, generator=g), torch.rand(batch_size, 4, 84, 84, generator=g),
                torch.zeros(batch_size, 1))


class FQFAgent:
    def __init__(self, num_actions=3, batch_size=4, N=8, num_cosines=16, ent_coef=0.1, kappa=1.0,
                 quantile_lr=5e-5, fraction_lr=2.5e-9, gamma=0.99, multi_step=1, grad_cliping=None):
        self.online_net = FQF(num_channels=4, num_actions=num_actions, N=N, num_cosines=num_cosines)
        self.target_net = FQF(num_channels=4, num_actions=num_actions, N=N, num_cosines=num_cosines, target=True)
        self.target_net.load_state_dict(self.online_net.state_dict(), strict=False)
        for param in self.target_net.parameters():
            param.requires_grad = False
        self.fraction_optim = RMSprop(self.online_net.fraction_net.parameters(), lr=fraction_lr, alpha=0.95, eps=0.00001)
        self.quantile_optim = Adam(
            list(self.online_net.dqn_net.parameters())
            + list(self.online_net.cosine_net.parameters())
            + list(self.online_net.quantile_net.parameters()),
            lr=quantile_lr, eps=1e-2/batch_size)
        self.memory = RandomMemory(torch.Generator().manual_seed(1), num_actions)
        self.batch_size, self.N, self.num_cosines = batch_size, N, num_cosines
        self.ent_coef, self.kappa, self.gamma_n = ent_coef, kappa, gamma ** multi_step
        self.double_q_learning = False
        self.use_per = False
        self.grad_cliping = grad_cliping
        self.learning_steps = 0
        self.log_interval = 10 ** 9

    def learn(self):
        self.learning_steps += 1
        self.online_net.sample_noise()
        self.target_net.sample_noise()

        states, actions, rewards, next_states, dones =\
            self.memory.sample(self.batch_size)
        weights = None

        # Calculate embeddings of current states.
        state_embeddings = self.online_net.calculate_state_embeddings(states)

        # Calculate fractions of current states and entropies.
        taus, tau_hats, entropies =\
            self.online_net.calculate_fractions(
                state_embeddings=state_embeddings)

        # Calculate quantile values of current states and actions at tau_hats.
        current_sa_quantile_hats = evaluate_quantile_at_action(
            self.online_net.calculate_quantiles(
                tau_hats, state_embeddings=state_embeddings),
            actions)
        assert current_sa_quantile_hats.shape == (
            self.batch_size, self.N, 1)

        # NOTE: Detach state_embeddings not to update convolution layers. Also,
        # detach current_sa_quantile_hats because I calculate gradients of taus
        # explicitly, not by backpropagation.
        fraction_loss = self.calculate_fraction_loss(
            state_embeddings.detach(), current_sa_quantile_hats.detach(),
            taus, actions, weights)

        quantile_loss, mean_q, errors = self.calculate_quantile_loss(
            state_embeddings, tau_hats, current_sa_quantile_hats, actions,
            rewards, next_states, dones, weights)

        entropy_loss = -self.ent_coef * entropies.mean()

        update_params(
            self.fraction_optim, fraction_loss + entropy_loss,
            networks=[self.online_net.fraction_net], retain_graph=True,
            grad_cliping=self.grad_cliping)
        update_params(
            self.quantile_optim, quantile_loss + entropy_loss,
            networks=[
                self.online_net.dqn_net, self.online_net.cosine_net,
                self.online_net.quantile_net],
            retain_graph=False, grad_cliping=self.grad_cliping)

    def calculate_fraction_loss(self, state_embeddings, sa_quantile_hats, taus,
                                actions, weights):
        assert not state_embeddings.requires_grad
        assert not sa_quantile_hats.requires_grad

        batch_size = state_embeddings.shape[0]

        with torch.no_grad():
            sa_quantiles = evaluate_quantile_at_action(
                self.online_net.calculate_quantiles(
                    taus=taus[:, 1:-1], state_embeddings=state_embeddings),
                actions)
            assert sa_quantiles.shape == (batch_size, self.N-1, 1)

        # NOTE: Proposition 1 in the paper requires F^{-1} is non-decreasing.
        # I relax this requirements and calculate gradients of taus even when
        # F^{-1} is not non-decreasing.

        values_1 = sa_quantiles - sa_quantile_hats[:, :-1]
        signs_1 = sa_quantiles > torch.cat([
            sa_quantile_hats[:, :1], sa_quantiles[:, :-1]], dim=1)
        assert values_1.shape == signs_1.shape

        values_2 = sa_quantiles - sa_quantile_hats[:, 1:]
        signs_2 = sa_quantiles < torch.cat([
            sa_quantiles[:, 1:], sa_quantile_hats[:, -1:]], dim=1)
        assert values_2.shape == signs_2.shape

        gradient_of_taus = (
            torch.where(signs_1, values_1, -values_1)
            + torch.where(signs_2, values_2, -values_2)
        ).view(batch_size, self.N-1)
        assert not gradient_of_taus.requires_grad
        assert gradient_of_taus.shape == taus[:, 1:-1].shape

        # Gradients of the network parameters and corresponding loss
        # are calculated using chain rule.
        if weights is not None:
            fraction_loss = ((
                (gradient_of_taus * taus[:, 1:-1]).sum(dim=1, keepdim=True)
            ) * weights).mean()
        else:
            fraction_loss = \
                (gradient_of_taus * taus[:, 1:-1]).sum(dim=1).mean()

        return fraction_loss

    def calculate_quantile_loss(self, state_embeddings, tau_hats,
                                current_sa_quantile_hats, actions, rewards,
                                next_states, dones, weights):
        assert not tau_hats.requires_grad

        with torch.no_grad():
            # NOTE: Current and target quantiles share the same proposed
            # fractions to reduce computations. (i.e. next_tau_hats = tau_hats)

            # Calculate Q values of next states.
            if self.double_q_learning:
                # Sample the noise of online network to decorrelate between
                # the action selection and the quantile calculation.
                self.online_net.sample_noise()
                next_q = self.online_net.calculate_q(states=next_states)
            else:
                next_state_embeddings =\
                    self.target_net.calculate_state_embeddings(next_states)
                next_q = self.target_net.calculate_q(
                    state_embeddings=next_state_embeddings,
                    fraction_net=self.online_net.fraction_net)

            # Calculate greedy actions.
            next_actions = torch.argmax(next_q, dim=1, keepdim=True)
            assert next_actions.shape == (self.batch_size, 1)

            # Calculate features of next states.
            if self.double_q_learning:
                next_state_embeddings =\
                    self.target_net.calculate_state_embeddings(next_states)

            # Calculate quantile values of next states and actions at tau_hats.
            next_sa_quantile_hats = evaluate_quantile_at_action(
                self.target_net.calculate_quantiles(
                    taus=tau_hats, state_embeddings=next_state_embeddings),
                next_actions).transpose(1, 2)
            assert next_sa_quantile_hats.shape == (
                self.batch_size, 1, self.N)

            # Calculate target quantile values.
            target_sa_quantile_hats = rewards[..., None] + (
                1.0 - dones[..., None]) * self.gamma_n * next_sa_quantile_hats
            assert target_sa_quantile_hats.shape == (
                self.batch_size, 1, self.N)

        td_errors = target_sa_quantile_hats - current_sa_quantile_hats
        assert td_errors.shape == (self.batch_size, self.N, self.N)

        quantile_huber_loss = calculate_quantile_huber_loss(
            td_errors, tau_hats, weights, self.kappa)

        return quantile_huber_loss, next_q.detach().mean().item(), \
            td_errors.detach().abs()


def compute():
    torch.manual_seed(0)
    agent = FQFAgent()
    out = {}
    for step in range(2):
        agent.learn()
        out.update({"step%d.fraction.%s" % (step, n): p.grad.clone() for n, p in agent.online_net.fraction_net.named_parameters()})
        out.update({"step%d.cosine.%s" % (step, n): p.grad.clone() for n, p in agent.online_net.cosine_net.named_parameters()})
        out["step%d.dqn.net.0.weight" % step] = agent.online_net.dqn_net.net[0].weight.grad.clone()
    out.update({"final.fraction." + n: p.detach().clone() for n, p in agent.online_net.fraction_net.named_parameters()})
    out["final.dqn.net.0.weight"] = agent.online_net.dqn_net.net[0].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
