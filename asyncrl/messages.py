"""What workers and the evaluator tell the launcher, as small picklable tuples.

Tuples, not objects: one is sent per finished episode and per logging interval, and they
cross a process boundary.
"""

from __future__ import annotations

from typing import Any, Protocol

EPISODE = "episode"  # (EPISODE, worker, frames_T, wall_time, score, episode_frames)
UPDATES = "updates"  # (UPDATES, worker, frames_T, {metric: mean over the interval})
EVAL = "eval"  # (EVAL, frames_T, wall_time, [scores])
ERROR = "error"  # (ERROR, worker, one-line reason, traceback text)
DIVERGED = "diverged"  # (DIVERGED, worker, frames_T, reason): the loss is no longer finite
LOG = "log"  # (LOG, source, level, text): a worker's or the evaluator's log record


class Outbox(Protocol):
    def put(self, item: Any) -> None: ...
