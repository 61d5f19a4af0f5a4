"""``network=gaussian``: the continuous-action actor-critic of the paper's MuJoCo experiments.

    policy: obs -> encoder -> LSTM(128) -> mu (linear, D) and sigma^2 (softplus of linear, 1)
    value:  obs -> encoder -> LSTM(128) -> V (linear)

The two branches share no parameters (Supp. "Continuous Action Control"). The encoder is one
layer of 200 ReLU units for physical state, or two convolutions without a non-linearity for
pixels. ``lstm_size: 0`` drops the LSTM (a feed-forward variant, not in the paper).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from asyncrl.nets.agent_network import AgentNetwork
from asyncrl.nets.distributions import GaussianPolicy
from asyncrl.nets.recurrent import LSTMCore, LSTMState

GaussianState = tuple[LSTMState | None, LSTMState | None]
# keeps log(sigma^2) finite if a softplus underflows; far below any useful variance
VAR_FLOOR = 1e-6


class StateEncoder(nn.Module):
    """One hidden layer of ReLU units over a state vector."""

    def __init__(self, input_size: int, hidden: int) -> None:
        super().__init__()
        self.fc = nn.Linear(input_size, hidden)
        self.output_size = hidden

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return F.relu(self.fc(obs.float()))


class PixelEncoder(nn.Module):
    """Two linear convolutions over uint8 RGB frames (C, H, W): no ReLU, no pooling."""

    def __init__(self, input_shape: tuple[int, ...]) -> None:
        super().__init__()
        channels, height, width = input_shape
        self.conv = nn.Sequential(
            nn.Conv2d(channels, 16, kernel_size=8, stride=4),
            nn.Conv2d(16, 32, kernel_size=4, stride=2),
            nn.Flatten(),
        )
        with torch.no_grad():
            self.output_size = int(self.conv(torch.zeros(1, channels, height, width)).shape[1])

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.conv(obs.float() * (1.0 / 255.0))


def _branch(observation_shape: tuple[int, ...], hidden: int, lstm_size: int) -> AgentNetwork:
    encoder: nn.Module
    if len(observation_shape) == 3:
        encoder = PixelEncoder(observation_shape)
    elif len(observation_shape) == 1:
        encoder = StateEncoder(observation_shape[0], hidden)
    else:
        raise ValueError(f"network=gaussian has no encoder for observations of shape "
                         f"{observation_shape}")
    core = LSTMCore(int(encoder.output_size), lstm_size) if lstm_size > 0 else None
    return AgentNetwork(encoder, core)


class GaussianActorCritic(nn.Module):
    """``forward(obs, state) -> ((mu (B, D), var (B, 1)), value (B,), state)``."""

    def __init__(self, observation_shape: tuple[int, ...], action_dim: int,
                 hidden: int = 200, lstm_size: int = 128) -> None:
        super().__init__()
        self.distribution = GaussianPolicy(action_dim)
        self.actor = _branch(observation_shape, hidden, lstm_size)
        self.critic = _branch(observation_shape, hidden, lstm_size)
        self.mu = nn.Linear(self.actor.feature_size, action_dim)
        self.var = nn.Linear(self.actor.feature_size, 1)
        self.value = nn.Linear(self.critic.feature_size, 1)
        # start with small means, so the first actions are the Gaussian's noise around 0
        with torch.no_grad():
            self.mu.weight.mul_(0.01)
            self.mu.bias.zero_()
            self.value.bias.zero_()

    @property
    def recurrent(self) -> bool:
        return self.actor.recurrent

    def initial_state(self) -> GaussianState | None:
        if not self.recurrent:
            return None
        return self.actor.initial_state(), self.critic.initial_state()

    def forward(self, obs: torch.Tensor, state: GaussianState | None = None
                ) -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor,
                           GaussianState | None]:
        actor_state, critic_state = state if state is not None else (None, None)
        actor_features, actor_state = self.actor.features(obs, actor_state)
        critic_features, critic_state = self.critic.features(obs, critic_state)
        new_state = (actor_state, critic_state) if self.recurrent else None
        return *self._heads(actor_features, critic_features), new_state

    def step_many(self, obs: torch.Tensor, states: list[GaussianState | None]
                  ) -> tuple[tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor],
                             list[GaussianState | None]]:
        """``((mu (k, D), var (k, 1)), values (k,))`` and the states after, for k
        environments; each branch steps its own recurrent state."""
        actor_features, actor_states = self.actor.features_many(
            obs, [None if s is None else s[0] for s in states])
        critic_features, critic_states = self.critic.features_many(
            obs, [None if s is None else s[1] for s in states])
        after: list[GaussianState | None] = (
            list(zip(actor_states, critic_states, strict=True)) if self.recurrent
            else [None] * len(states))
        return self._heads(actor_features, critic_features), after

    def _heads(self, actor_features: torch.Tensor, critic_features: torch.Tensor
               ) -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        """``((mu, var), value)`` from each branch's features."""
        mu = self.mu(actor_features)
        var = F.softplus(self.var(actor_features)) + VAR_FLOOR
        return (mu, var), self.value(critic_features).squeeze(-1)
