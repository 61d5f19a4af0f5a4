"""Targets of the value-based methods as pure functions (paper, Algorithms 1 and S2).

Every bootstrap value comes from the target network theta^-; a step marked terminal for
learning bootstraps 0. A segment cut by a time limit is not terminal, so it bootstraps.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from asyncrl.algos.returns import discounted_returns, lambda_returns


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


def state_values(q_target: torch.Tensor, q_online: torch.Tensor | None = None) -> torch.Tensor:
    """The value of each row's state for a Q-learning target.

    ``max_a Q(s, a; theta^-)`` (the paper), or with ``q_online`` double Q-learning's
    ``Q(s, argmax_a Q(s, a; theta); theta^-)``: the online network picks the action and the
    target network values it, so one network's overestimate is not both chosen and used.
    """
    if q_online is None:
        return q_target.max(-1).values
    chosen = q_online.argmax(-1, keepdim=True)
    return q_target.gather(-1, chosen).squeeze(-1)


def lambda_q_targets(rewards: Sequence[float], terminals: Sequence[bool],
                     next_values: torch.Tensor, gamma: float, lam: float) -> torch.Tensor:
    """λ-returns of n-step Q's segment: ``next_values[i]`` values s_{i+1} (the last one is
    the bootstrap), each mixed in with weight 1 - lam; lam = 1 is ``nstep_q_targets``."""
    return torch.tensor(lambda_returns(rewards, terminals, next_values.tolist(), gamma, lam))
