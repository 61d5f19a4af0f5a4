"""The two kinds of network the algorithms learn, on a torso and an optional LSTM core.

    ActorCritic: obs -> torso [-> LSTM] -> softmax policy logits and a linear value
    QNetwork:    obs -> torso [-> LSTM] -> one linear action-value per action

Both take ``(obs, state)`` and hand back the recurrent state after the last step, which is
``None`` for feed-forward networks.
"""

from __future__ import annotations

import torch
from torch import nn

from asyncrl.nets.distributions import CategoricalPolicy
from asyncrl.nets.dueling import DuelingHead
from asyncrl.nets.recurrent import LSTMCore, LSTMState


class AgentNetwork(nn.Module):
    """Torso and optional recurrent core shared by the heads of a subclass."""

    distribution = CategoricalPolicy()  # how actions are drawn and stored

    def __init__(self, torso: nn.Module, core: LSTMCore | None = None) -> None:
        super().__init__()
        self.torso = torso
        self.core = core
        self.feature_size = int(core.output_size if core is not None
                                else torso.output_size)  # type: ignore[arg-type]

    @property
    def recurrent(self) -> bool:
        return self.core is not None

    def initial_state(self) -> LSTMState | None:
        return self.core.initial_state() if self.core is not None else None

    def features(self, obs: torch.Tensor,
                 state: LSTMState | None) -> tuple[torch.Tensor, LSTMState | None]:
        out = self.torso(obs)
        if self.core is None:
            return out, None
        return self.core(out, state)

    def features_many(self, obs: torch.Tensor, states: list[LSTMState | None]
                      ) -> tuple[torch.Tensor, list[LSTMState | None]]:
        """One step of ``len(states)`` environments at once: ``obs[i]`` is environment i's
        observation and ``states[i]`` its recurrent state (None: the initial one)."""
        out = self.torso(obs)
        if self.core is None:
            return out, [None] * len(states)
        if any(s is None for s in states):  # a zero state only for a new episode's first step
            fresh = self.core.initial_state()
            states = [fresh if s is None else s for s in states]
        h = torch.cat([s[0] for s in states], dim=1)  # type: ignore[index]
        c = torch.cat([s[1] for s in states], dim=1)  # type: ignore[index]
        # the LSTM's batch dimension is the environment; its sequence is this one step
        stepped, (h, c) = self.core.lstm(out.unsqueeze(0), (h, c))
        after: list[LSTMState | None] = [(h[:, i : i + 1], c[:, i : i + 1])
                                         for i in range(len(states))]
        return stepped.squeeze(0), after


class ActorCritic(AgentNetwork):
    """``forward(obs, state) -> (logits (B, A), value (B,), state)`` (paper, Section 4)."""

    def __init__(self, torso: nn.Module, num_actions: int, core: LSTMCore | None = None,
                 policy_init_scale: float = 1.0) -> None:
        super().__init__(torso, core)
        self.policy = nn.Linear(self.feature_size, num_actions)
        self.value = nn.Linear(self.feature_size, 1)
        # torch's default init times policy_init_scale. A small scale gives a near-uniform
        # first policy, but the policy loss then sends its gradient into the shared torso
        # through these weights, scaled down as much: on Pong 0.01 left the torso learning
        # for the value alone (docs/notes/)
        with torch.no_grad():
            self.policy.weight.mul_(policy_init_scale)
            self.policy.bias.zero_()
            self.value.bias.zero_()

    def forward(self, obs: torch.Tensor, state: LSTMState | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, LSTMState | None]:
        features, state = self.features(obs, state)
        return self.policy(features), self.value(features).squeeze(-1), state

    def step_many(self, obs: torch.Tensor, states: list[LSTMState | None]
                  ) -> tuple[tuple[torch.Tensor, torch.Tensor], list[LSTMState | None]]:
        """``(logits (k, A), values (k,))`` and the states after, for k environments."""
        features, states = self.features_many(obs, states)
        return (self.policy(features), self.value(features).squeeze(-1)), states


class QNetwork(AgentNetwork):
    """``forward(obs, state) -> (Q (B, A), state)``: one linear output per action (Supp. 8)."""

    def __init__(self, torso: nn.Module, num_actions: int, core: LSTMCore | None = None,
                 dueling: bool = False) -> None:
        super().__init__(torso, core)
        self.q: nn.Module
        if dueling:  # value and advantage streams (nets/dueling.py)
            self.q = DuelingHead(self.feature_size, num_actions)
            return
        self.q = nn.Linear(self.feature_size, num_actions)
        with torch.no_grad():
            self.q.bias.zero_()

    def forward(self, obs: torch.Tensor, state: LSTMState | None = None
                ) -> tuple[torch.Tensor, LSTMState | None]:
        features, state = self.features(obs, state)
        return self.q(features), state

    def step_many(self, obs: torch.Tensor, states: list[LSTMState | None]
                  ) -> tuple[tuple[torch.Tensor], list[LSTMState | None]]:
        """``(Q (k, A),)`` and the states after, for k environments."""
        features, states = self.features_many(obs, states)
        return (self.q(features),), states
