"""The dueling Q head (Wang et al. 2016): a value stream and an advantage stream.

    Q(s, a) = V(s) + A(s, a) - mean_a' A(s, a')

Subtracting the mean makes the split identifiable: without it any constant could move
between V and A and leave Q unchanged.
"""

from __future__ import annotations

import torch
from torch import nn


def dueling_q(value: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """Q-values (B, A) from values (B, 1) and advantages (B, A)."""
    return value + advantages - advantages.mean(dim=-1, keepdim=True)


class DuelingHead(nn.Module):
    """``forward(features (B, F)) -> Q (B, A)``: a drop-in for QNetwork's linear head."""

    def __init__(self, feature_size: int, num_actions: int) -> None:
        super().__init__()
        self.value = nn.Linear(feature_size, 1)
        self.advantage = nn.Linear(feature_size, num_actions)
        with torch.no_grad():
            self.value.bias.zero_()
            self.advantage.bias.zero_()

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return dueling_q(self.value(features), self.advantage(features))
