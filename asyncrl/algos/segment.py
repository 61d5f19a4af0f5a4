"""What a worker hands its algorithm after acting: one segment of at most t_max steps."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from asyncrl.nets import LSTMState


@dataclass
class SegmentBatch:
    """States ``s_t .. s_{t+n}`` (one more than the actions), the actions, clipped rewards,
    learning terminals, the recurrent state before ``s_t``, and (for Sarsa) the action chosen
    for ``s_{t+n}``, which the next segment then takes."""

    obs: torch.Tensor
    actions: torch.Tensor
    rewards: list[float]
    terminals: list[bool]
    start_state: LSTMState | None = None
    next_action: int | None = None

    @property
    def steps(self) -> int:
        return len(self.rewards)
