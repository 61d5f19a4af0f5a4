"""The LogUniform sweep's range rule, once: the config's check of a ``-m`` command line
refuses an impossible range with it before any run starts, and the sweeper (``run/sweep.py``)
checks each run's range with it (no torch, no numpy here)."""

from __future__ import annotations

import math

from asyncrl.errors import UserError


def check_range(low: float, high: float, trials: int) -> None:
    """Refuse a range LogUniform cannot draw from, or a sweep of no runs."""
    if not (0 < low < math.inf and 0 < high < math.inf):
        raise UserError(f"sweep range ({low:g}, {high:g}): both bounds must be positive and "
                        "finite for a log-uniform draw")
    if low >= high:
        raise UserError(f"sweep range ({low:g}, {high:g}): low must be below high")
    if trials < 1:
        raise UserError(f"hydra.sweeper.trials={trials}: need at least 1 run")
