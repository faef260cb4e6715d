# skrl (reinforcement learning library) models/torch/base.py and models/torch/deterministic.py as of the parent of
# commit 277f383f ("Use not in-place clamp method to allow gradient computation"): Model (constructor and
# _get_space_size) and DeterministicModel.act, copied; docstrings shortened.
# The culprit: DeterministicModel.act clips the network's actions in place, `actions.clamp_(low, high)`, on the
# output of the user's compute(); when that ends in a Tanh (a DDPG actor), TanhBackward saved the output.
# Stand-ins: `gym` is a minimal namespace with Space / Box / Discrete (low, high, shape, n), enough for the
# `issubclass(type(space), gym.Space)` tests; numpy is a two-function stand-in (np.prod, np.full as a list); Model's init_parameters / set_mode / save / load are cut.
from typing import Union, Tuple

import math

import torch


class np:  # stand-in for numpy (not installed with the benchmark's torch): prod and full
    prod = staticmethod(math.prod)

    @staticmethod
    def full(shape, value, dtype=None):
        return [float(value)] * math.prod(shape)

    float32 = float


class _Gym:  # stand-in for the gym package
    class Space:
        pass

    class Box(Space):
        def __init__(self, low, high, shape):
            self.shape = tuple(shape)
            self.low = np.full(self.shape, low, dtype=np.float32)
            self.high = np.full(self.shape, high, dtype=np.float32)

    class spaces:
        pass


class _Discrete(_Gym.Space):
    def __init__(self, n):
        self.n = n


_Gym.spaces.Discrete = _Discrete
_Gym.spaces.Box = _Gym.Box
gym = _Gym


class Model(torch.nn.Module):
    def __init__(self, observation_space: Union[int, Tuple[int], gym.Space, None] = None, action_space: Union[int, Tuple[int], gym.Space, None] = None, device: str = "cuda:0") -> None:
        """
        Base class representing a neural network model
        """
        super(Model, self).__init__()

        self.device = device

        self.observation_space = observation_space
        self.action_space = action_space
        self.num_observations = None if observation_space is None else self._get_space_size(observation_space)
        self.num_actions = None if action_space is None else self._get_space_size(action_space)

    def _get_space_size(self, space: Union[int, Tuple[int], gym.Space]) -> int:
        if type(space) in [tuple, list]:
            return np.prod(space)
        elif issubclass(type(space), gym.Space):
            if issubclass(type(space), gym.spaces.Discrete):
                return space.n
            return np.prod(space.shape)
        return space

    def forward(self):
        raise NotImplementedError("Implement .act() and .compute() methods instead of this")

    def compute(self, states: torch.Tensor, taken_actions: Union[torch.Tensor, None] = None) -> Union[torch.Tensor, Tuple[torch.Tensor]]:
        raise NotImplementedError("The computation performed by all involved networks (.compute()) is not implemented")

    def act(self, states: torch.Tensor, taken_actions: Union[torch.Tensor, None] = None, inference=False) -> Tuple[torch.Tensor]:
        raise NotImplementedError("The action to be taken by the agent (.act()) is not implemented")


class DeterministicModel(Model):
    def __init__(self, observation_space: Union[int, Tuple[int], gym.Space, None] = None, action_space: Union[int, Tuple[int], gym.Space, None] = None, device: str = "cuda:0") -> None:
        """
        Deterministic model (deterministic model)
        """
        super(DeterministicModel, self).__init__(observation_space, action_space, device)

    def act(self, states: torch.Tensor, taken_actions: Union[torch.Tensor, None] = None, inference=False) -> Tuple[torch.Tensor]:
        """
        Act deterministically in response to the state of the environment
        """
        # map from observations/states to actions
        actions = self.compute(states.to(self.device), 
                               taken_actions.to(self.device) if taken_actions is not None else taken_actions)

        # clip actions 
        # TODO: use tensor too for low and high
        if issubclass(type(self.action_space), gym.Space):
            actions.clamp_(self.action_space.low[0], self.action_space.high[0])

        return actions, None, None
