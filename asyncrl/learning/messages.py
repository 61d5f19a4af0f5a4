"""What workers and the evaluator tell the launcher through its queue.

Small frozen dataclasses: one is sent per finished episode and per logging interval, and
each crosses a process boundary, so they hold plain numbers, strings and lists only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Episode:
    """A training episode ended: its raw score, at the global frame count T, and which of
    the worker's ``envs_per_worker`` environments played it."""

    worker: int
    frames: int
    wall_time: float
    score: float
    episode_frames: int
    environment: int = 0


@dataclass(frozen=True)
class Updates:
    """A worker's metric means over its last logging interval."""

    worker: int
    frames: int
    stats: dict[str, float]


@dataclass(frozen=True)
class Evaluation:
    """The evaluator played the live policy at T = ``frames``."""

    frames: int
    wall_time: float
    scores: list[float]


@dataclass(frozen=True)
class WorkerError:
    """A worker raised: a one-line reason, and the traceback for the log."""

    worker: int
    reason: str
    trace: str


@dataclass(frozen=True)
class Diverged:
    """A worker's loss or network output stopped being finite."""

    worker: int
    frames: int
    reason: str


@dataclass(frozen=True)
class LogLine:
    """A worker's or the evaluator's log record."""

    source: str
    level: int
    text: str


Message = Episode | Updates | Evaluation | WorkerError | Diverged | LogLine
