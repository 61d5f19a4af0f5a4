"""Targets of the value-based methods as pure functions (paper, Algorithms 1 and S2).

Every bootstrap value comes from the target network theta^-; a step marked terminal for
learning bootstraps 0. A segment cut by a time limit is not terminal, so it bootstraps.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from asyncrl.algos.returns import discounted_returns


def one_step_targets(rewards: Sequence[float], terminals: Sequence[bool],
                     next_values: torch.Tensor, gamma: float) -> torch.Tensor:
    """``y_i = r_i`` after a terminal step, else ``r_i + gamma * next_values[i]``.

    Q-learning passes ``max_a Q(s_{i+1}, a; theta^-)``; Sarsa passes
    ``Q(s_{i+1}, a_{i+1}; theta^-)`` with ``a_{i+1}`` the action actually taken next.
    """
    if not len(rewards) == len(terminals) == len(next_values):
        raise ValueError("rewards, terminals and next_values differ in length")
    reward = torch.tensor(rewards, dtype=torch.float32)
    alive = 1.0 - torch.tensor(terminals, dtype=torch.float32)
    return reward + gamma * alive * next_values.detach().float()


def nstep_q_targets(rewards: Sequence[float], terminals: Sequence[bool],
                    bootstrap_q: torch.Tensor, gamma: float) -> torch.Tensor:
    """The longest n-step return for each state of the segment (forward view, Algorithm S2),
    bootstrapped with ``max_a Q(s_{t+n}, a; theta^-)`` unless the segment ended terminally."""
    bootstrap = 0.0 if terminals[-1] else float(bootstrap_q.max())
    return torch.tensor(discounted_returns(rewards, terminals, bootstrap, gamma))
