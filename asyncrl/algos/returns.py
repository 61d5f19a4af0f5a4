"""n-step returns as pure functions (paper, Algorithms S2 and S3, the inner "for i" loop)."""

from __future__ import annotations

from collections.abc import Sequence

import torch


def discounted_returns(
    rewards: Sequence[float], terminals: Sequence[bool], bootstrap: float, gamma: float
) -> list[float]:
    """Forward-view returns of one segment, computed backwards from its end.

    ``R_i = r_i + gamma * R_{i+1}``, with ``R_n = bootstrap`` (the value of the state after
    the segment) and the chain cut to 0 after any step whose ``terminals[i]`` is true. Each
    state gets the longest return the segment allows, as in the paper.
    """
    if len(rewards) != len(terminals):
        raise ValueError("rewards and terminals differ in length")
    out = [0.0] * len(rewards)
    ret = float(bootstrap)
    for i in range(len(rewards) - 1, -1, -1):
        if terminals[i]:
            ret = 0.0
        ret = rewards[i] + gamma * ret
        out[i] = ret
    return out


def advantages(returns: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """``R_i - V(s_i)``, with no gradient into V: the policy term must not train the critic."""
    return returns - values.detach()


def lambda_returns(rewards: Sequence[float], terminals: Sequence[bool],
                   next_values: Sequence[float], gamma: float, lam: float) -> list[float]:
    """λ-returns of one segment, the forward view of eligibility traces.

    ``G_i = r_i + gamma * ((1 - lam) * next_values[i] + lam * G_{i+1})``, where
    ``next_values[i]`` is the value of the state after step i (the last one the segment's
    bootstrap) and ``G_n`` is that bootstrap; a terminal step's G is its reward alone.
    ``lam = 1`` is ``discounted_returns``; ``lam = 0`` the one-step targets. With state
    values V, ``G_i - V(s_i)`` is GAE(λ)'s advantage.
    """
    if not len(rewards) == len(terminals) == len(next_values):
        raise ValueError("rewards, terminals and next_values differ in length")
    out = [0.0] * len(rewards)
    ret = float(next_values[-1]) if len(next_values) else 0.0
    for i in range(len(rewards) - 1, -1, -1):
        if terminals[i]:
            ret = rewards[i]
        else:
            ret = rewards[i] + gamma * ((1.0 - lam) * float(next_values[i]) + lam * ret)
        out[i] = ret
    return out
