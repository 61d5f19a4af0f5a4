"""The recurrent core of ``network=lstm``: 256 LSTM cells after the fc layer (paper, Section 5.1).

One worker drives one environment, so a sequence is just the leading dimension: acting feeds
one step at a time, the loss feeds a whole segment from the state saved at its start.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

LSTMState = tuple[torch.Tensor, torch.Tensor]


class LSTMCore(nn.Module):
    """``forward(features (T, F), state) -> (outputs (T, H), state after the last step)``."""

    def __init__(self, input_size: int, hidden: int = 256) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden)
        self.output_size = hidden
        # a forget gate that starts open lets the state carry across steps from the start
        with torch.no_grad():
            for name, bias in self.lstm.named_parameters():
                if name.startswith("bias_ih"):
                    bias.zero_()
                    bias[hidden : 2 * hidden].fill_(1.0)
                elif name.startswith("bias_hh"):
                    bias.zero_()

    def initial_state(self) -> LSTMState:
        size = self.output_size
        return torch.zeros(1, 1, size), torch.zeros(1, 1, size)

    def forward(self, features: torch.Tensor,
                state: LSTMState | None = None) -> tuple[torch.Tensor, LSTMState]:
        if state is None:
            state = self.initial_state()
        out, new_state = self.lstm(features.unsqueeze(1), state)
        return out.squeeze(1), new_state


def detach_state(state: Any) -> Any:
    """A copy that autograd can use but that carries no history: the truncation point of
    BPTT, and safe to feed to a graph even when made under ``inference_mode``.

    Takes an LSTM's ``(h, c)``, ``None``, or a tuple of those (``network=gaussian`` keeps one
    state per branch)."""
    if state is None:
        return None
    if isinstance(state, torch.Tensor):
        return state.detach().clone()
    return tuple(detach_state(part) for part in state)
