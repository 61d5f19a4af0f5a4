"""Exploration of the value-based methods (paper, Supp. 8 "Experimental Setup").

Each worker draws its own final epsilon once, from {0.1, 0.01, 0.5} with probabilities
{0.4, 0.3, 0.3}, and anneals from 1 to it linearly over the first 4 million frames of the
global counter T. Different exploration per worker is what the paper credits for robustness.
With ``algo.epsilon_redraw`` each environment draws again as each of its episodes begins
(the paper's "periodically sampled"; ``ValueBased.episode_began``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from asyncrl.algos.configs import epsilon_problem


def draw_final_epsilon(rng: np.random.Generator, finals: Sequence[float],
                       probabilities: Sequence[float]) -> float:
    """One worker's final epsilon."""
    problem = epsilon_problem(finals, probabilities)
    if problem is not None:
        raise ValueError(problem)
    return float(rng.choice(np.asarray(finals, dtype=float), p=np.asarray(probabilities)))


def annealed_epsilon(final: float, frames: int, anneal_frames: int) -> float:
    """1 at frame 0, ``final`` from ``anneal_frames`` on, linear in between."""
    if anneal_frames <= 0:
        return final
    fraction = min(1.0, frames / anneal_frames)
    return 1.0 + (final - 1.0) * fraction


def epsilon_greedy(q_values: torch.Tensor, epsilon: float, generator: torch.Generator) -> int:
    """A uniformly random action with probability ``epsilon``, else the greedy one."""
    if float(torch.rand((), generator=generator)) < epsilon:
        return int(torch.randint(q_values.shape[-1], (), generator=generator))
    return int(q_values.argmax())
