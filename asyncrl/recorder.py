"""Everything a run writes while it trains: CSV files and TensorBoard events."""

from __future__ import annotations

import csv
from collections import deque
from pathlib import Path
from typing import Any

EPISODE_FIELDS = ["worker", "frames", "wall_time", "score", "episode_frames"]
UPDATE_FIELDS = ["worker", "frames", "wall_time", "updates"]  # then the algorithm's metrics
EVAL_FIELDS = ["frames", "wall_time", "mean_score", "episodes", "scores"]


class CsvLog:
    """Append-only CSV with a header written once, so a resumed run extends the same file."""

    def __init__(self, path: Path, fields: list[str]) -> None:
        new = not path.exists() or path.stat().st_size == 0
        self._handle = path.open("a", newline="", buffering=1)
        self._writer = csv.DictWriter(self._handle, fieldnames=fields, extrasaction="ignore")
        if new:
            self._writer.writeheader()

    def write(self, row: dict[str, Any]) -> None:
        self._writer.writerow(row)

    def close(self) -> None:
        self._handle.close()


class Recorder:
    """Turns worker messages into rows, TensorBoard points and the console's running numbers."""

    def __init__(self, run_dir: Path, tensorboard: bool, score_window: int,
                 metrics: list[str]) -> None:
        self.episodes = CsvLog(run_dir / "episodes.csv", EPISODE_FIELDS)
        self.updates = CsvLog(run_dir / "updates.csv", [*UPDATE_FIELDS, *metrics])
        self.evals = CsvLog(run_dir / "eval.csv", EVAL_FIELDS)
        self.recent_scores: deque[float] = deque(maxlen=score_window)
        self.episode_count = 0
        self.last_eval: float | None = None
        self.tb = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.tb = SummaryWriter(log_dir=str(run_dir / "tb"))

    def episode(self, worker: int, frames: int, wall: float, score: float, length: int) -> None:
        self.episodes.write({"worker": worker, "frames": frames, "wall_time": round(wall, 3),
                             "score": score, "episode_frames": length})
        self.recent_scores.append(score)
        self.episode_count += 1
        if self.tb is not None:
            self.tb.add_scalar("episode/score", score, frames)
            self.tb.add_scalar("episode/frames", length, frames)

    def update(self, worker: int, frames: int, wall: float, stats: dict[str, float]) -> None:
        self.updates.write({"worker": worker, "frames": frames, "wall_time": round(wall, 3),
                            **stats})
        if self.tb is not None:
            for key, value in stats.items():
                self.tb.add_scalar(f"train/{key}", value, frames)

    def evaluation(self, frames: int, wall: float, scores: list[float]) -> None:
        mean = sum(scores) / len(scores)
        self.last_eval = mean
        self.evals.write({"frames": frames, "wall_time": round(wall, 3), "mean_score": mean,
                          "episodes": len(scores), "scores": " ".join(f"{s:g}" for s in scores)})
        if self.tb is not None:
            self.tb.add_scalar("eval/mean_score", mean, frames)

    def speed(self, frames: int, frames_per_second: float) -> None:
        if self.tb is not None:
            self.tb.add_scalar("train/frames_per_second", frames_per_second, frames)

    def recent_mean(self) -> float | None:
        if not self.recent_scores:
            return None
        return sum(self.recent_scores) / len(self.recent_scores)

    def close(self) -> None:
        for log in (self.episodes, self.updates, self.evals):
            log.close()
        if self.tb is not None:
            self.tb.close()
