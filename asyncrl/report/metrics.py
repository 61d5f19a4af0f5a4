"""The numbers a report draws, as pure functions of scores, frames and hours.

    final score:        mean of a run's last ``window`` training episodes
    best-k:             the k runs of a group with the highest final scores
    curve on a grid:    at each point, the mean of the last ``window`` episodes finished by then
    time to reach:      first point where a (mean) curve is at or above a reference score
    speed-up:           time of the fewest-workers group / time of each group, to one score
    human-normalised:   100 (score - random) / (human - random)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

FAILED_STATES = ("failed", "diverged")


def final_score(scores: np.ndarray, window: int = 20) -> float | None:
    if len(scores) == 0:
        return None
    return float(np.mean(scores[-window:]))


def run_final_score(run: Any, window: int = 20) -> float | None:
    """None for a run that failed or diverged: it has no score to rank by."""
    if run.status in FAILED_STATES:
        return None
    return final_score(run.scores, window)


def best_k(runs: Sequence[Any], k: int, window: int = 20) -> list[Any]:
    scored = [(run_final_score(r, window), i, r) for i, r in enumerate(runs)]
    ranked = sorted(((s, i, r) for s, i, r in scored if s is not None), key=lambda t: -t[0])
    return [r for _, _, r in ranked[:k]]


def curve_on_grid(x: np.ndarray, scores: np.ndarray, grid: np.ndarray,
                  window: int = 20) -> np.ndarray:
    """The running mean of the last ``window`` scores, read at each grid point (NaN before
    the first episode ends)."""
    out = np.full(len(grid), np.nan)
    if len(scores) == 0:
        return out
    cumulative = np.concatenate([[0.0], np.cumsum(scores)])
    done = np.searchsorted(x, grid, side="right")  # episodes finished by each grid point
    has = done > 0
    start = np.maximum(done - window, 0)
    out[has] = (cumulative[done[has]] - cumulative[start[has]]) / (done[has] - start[has])
    return out


def mean_curve(xs: Sequence[np.ndarray], scores: Sequence[np.ndarray], points: int = 100,
               window: int = 20) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid, mean and standard deviation over runs, up to where the shortest run ends."""
    end = min(float(x[-1]) for x in xs if len(x))
    grid = np.linspace(0.0, end, points)
    curves = np.stack([curve_on_grid(x, s, grid, window) for x, s in zip(xs, scores,
                                                                         strict=True)])
    with warnings.catch_warnings():  # points before any run's first episode are all-NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        return grid, np.nanmean(curves, axis=0), np.nanstd(curves, axis=0)


def time_to_reach(grid: np.ndarray, curve: np.ndarray, reference: float) -> float | None:
    reached = np.nonzero(curve >= reference)[0]
    return float(grid[reached[0]]) if len(reached) else None


def speedups(times: dict[int, float | None]) -> dict[int, float | None]:
    """``{workers: time to the reference}`` -> ``{workers: speed-up over the fewest}``."""
    base_workers = min(times)
    base = times[base_workers]
    out: dict[int, float | None] = {}
    for workers, time in sorted(times.items()):
        out[workers] = None if base is None or time is None or time <= 0 else base / time
    return out


def human_normalised(score: float, random: float, human: float) -> float:
    return 100.0 * (score - random) / (human - random)
