"""A softmax policy head and a linear value head on one shared torso (paper, Section 4)."""

from __future__ import annotations

import torch
from torch import nn


class ActorCritic(nn.Module):
    """``forward(obs) -> (logits, value)``; logits of shape (B, A), value of shape (B,)."""

    def __init__(self, torso: nn.Module, num_actions: int) -> None:
        super().__init__()
        self.torso = torso
        size = int(torso.output_size)  # type: ignore[arg-type]
        self.policy = nn.Linear(size, num_actions)
        self.value = nn.Linear(size, 1)
        # a near-uniform first policy: no action is favoured before any learning
        with torch.no_grad():
            self.policy.weight.mul_(0.01)
            self.policy.bias.zero_()
            self.value.bias.zero_()

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.torso(obs)
        return self.policy(features), self.value(features).squeeze(-1)
