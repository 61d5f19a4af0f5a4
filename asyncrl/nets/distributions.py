"""The two policy outputs of A3C, written out so the loss reads like the paper.

    categorical: a softmax over discrete actions; the network outputs logits (B, A)
    gaussian:    a spherical normal N(mu, sigma^2 I) over R^D; the network outputs
                 (mu (B, D), sigma^2 (B, 1)) (paper, Supp. "Continuous Action Control")

Each says how to sample an action, the log-probability of actions taken, the entropy, and
what dtype and shape a rollout stores actions in.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

LOG_2PI = math.log(2.0 * math.pi)


class NonFiniteOutput(FloatingPointError):
    """The network gave inf or NaN: its parameters have diverged."""


def _finite(*tensors: torch.Tensor) -> None:
    if not all(bool(torch.isfinite(t).all()) for t in tensors):
        raise NonFiniteOutput("the policy's output is not finite")


class CategoricalPolicy:
    continuous = False

    def sample(self, logits: torch.Tensor, generator: torch.Generator) -> list[int]:
        """One action per row of ``logits`` (k, A), in one draw."""
        probs = logits.softmax(-1)
        try:
            return torch.multinomial(probs, 1, generator=generator).squeeze(1).tolist()
        except RuntimeError:  # multinomial checks its input anyway: no cost on the hot path
            _finite(probs)
            raise

    def log_prob(self, logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(logits, dim=-1).gather(1, actions.long().unsqueeze(1)).squeeze(1)

    def entropy(self, logits: torch.Tensor) -> torch.Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        return -(log_probs.exp() * log_probs).sum(-1)

    def action_buffer(self, steps: int) -> torch.Tensor:
        return torch.zeros(steps, dtype=torch.int64)


class GaussianPolicy:
    """``out = (mu, var)``; var is sigma^2, one scalar per state shared by every dimension."""

    continuous = True

    def __init__(self, action_dim: int) -> None:
        self.action_dim = action_dim

    def sample(self, out: tuple[torch.Tensor, torch.Tensor],
               generator: torch.Generator) -> list[np.ndarray]:
        """One action vector per row of ``mu`` (k, D)."""
        mu, var = out
        _finite(mu, var)
        noise = torch.randn(mu.shape, generator=generator)
        return list((mu + var.sqrt() * noise).detach().numpy().astype(np.float32))

    def log_prob(self, out: tuple[torch.Tensor, torch.Tensor],
                 actions: torch.Tensor) -> torch.Tensor:
        """log N(a; mu, var I) = -|a - mu|^2 / (2 var) - D/2 log(2 pi var)."""
        mu, var = out
        var = var.squeeze(-1)
        squared = (actions - mu).pow(2).sum(-1)
        return -0.5 * squared / var - 0.5 * self.action_dim * (LOG_2PI + var.log())

    def entropy(self, out: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """D/2 (log(2 pi var) + 1): the paper's cost -1/2 (log(2 pi sigma^2) + 1) per
        dimension, with the sign of a bonus."""
        _, var = out
        return 0.5 * self.action_dim * (LOG_2PI + var.squeeze(-1).log() + 1.0)

    def action_buffer(self, steps: int) -> torch.Tensor:
        return torch.zeros(steps, self.action_dim, dtype=torch.float32)
