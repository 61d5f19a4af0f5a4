"""What a finished run hands back: its status and its score, read from the run directory.

A tuning sweeper (Hydra's Optuna sweeper) and ``asyncrl.train`` both take the score from
``status.json``, the file the launcher writes last, so a resumed run scores the same way as
one that ran in one go.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from asyncrl.run_files.run_status import FINISHED, read_status

# objective= -> the field of status.json that holds it
SCORE_FIELDS = {"train_score": "recent_score", "eval_score": "last_eval"}


@dataclass(frozen=True)
class RunOutcome:
    status: str    # finished, interrupted, failed, diverged; "unknown" without a status.json
    score: float   # NaN where the run has no score: it did not finish, or never got one
    reason: str = ""


def read_outcome(run_dir: Path, objective: str) -> RunOutcome:
    """The run's status and its ``objective`` (``train_score`` or ``eval_score``)."""
    recorded = read_status(run_dir) or {}
    status = str(recorded.get("status", "unknown"))
    value = recorded.get(SCORE_FIELDS[objective])
    score = float(value) if status == FINISHED and isinstance(value, int | float) else math.nan
    return RunOutcome(status, score, str(recorded.get("reason", "")))


def sweeper_value(outcome: RunOutcome) -> float | None:
    """What the Hydra task function returns: the score, or None for a run without one.

    None rather than NaN: hydra-optuna-sweeper 1.3.0 (its newest release) stops the whole
    study when a trial returns NaN (it tells Optuna the rejected value a second time; Hydra
    issue #2237), while a value ``float()`` refuses is recorded as a failed trial and the
    study goes on.
    """
    return None if math.isnan(outcome.score) else outcome.score
