"""Per-process seeds derived from one run seed, so that no two workers share a stream."""

from __future__ import annotations

import random

import numpy as np
import torch


def derive_seed(seed: int, *keys: int) -> int:
    """A 31-bit seed that depends on the run seed and on every key (worker id, restarts...)."""
    sequence = np.random.SeedSequence([seed, *keys])
    return int(sequence.generate_state(1)[0] & 0x7FFFFFFF)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
