"""Everything a run writes while it trains: CSV files, and the same scalars to its trackers
(TensorBoard, W&B: ``asyncrl.run_files.trackers``)."""

from __future__ import annotations

import csv
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from asyncrl.run_files.atomic import write_text_atomically
from asyncrl.run_files.trackers import Tracker

# environment: which of the worker's envs_per_worker environments played the episode (0 with
# one each), so a run whose environments differ (a final ε each) can be read per environment
EPISODE_FIELDS = ["worker", "frames", "wall_time", "score", "episode_frames", "environment"]
UPDATE_FIELDS = ["worker", "frames", "wall_time", "updates"]  # then the algorithm's metrics
EVAL_FIELDS = ["frames", "wall_time", "mean_score", "episodes", "scores"]


class CsvLog:
    """Append-only CSV with a header written once, so a resumed run extends the same file."""

    def __init__(self, path: Path, fields: list[str]) -> None:
        new = not path.exists() or path.stat().st_size == 0
        if not new:
            # a run resumed by a later version keeps its file's columns: a metric added
            # since is not written there rather than written under another's header
            with path.open(newline="") as existing:
                header: list[str] | None = next(csv.reader(existing), None)
                fields = header or fields
        self.path = path
        self._handle = path.open("a", newline="", buffering=1)
        self._writer = csv.DictWriter(self._handle, fieldnames=fields, extrasaction="ignore")
        if new:
            self._writer.writeheader()

    def write(self, row: dict[str, Any]) -> None:
        try:
            self._writer.writerow(row)
        except OSError as error:  # a write to an open file does not say which file
            raise OSError(error.errno, error.strerror, str(self.path)) from error

    def close(self) -> None:
        try:
            self._handle.close()
        except OSError as error:
            raise OSError(error.errno, error.strerror, str(self.path)) from error


def complete_lines(text: str) -> list[str]:
    """The lines of a CSV's text without a last line still being (or never fully) written."""
    return text[: text.rfind("\n") + 1].splitlines(keepends=True)


def keep_rows_up_to(path: Path, frames: int) -> list[dict[str, str]]:
    """Drop the rows of ``path`` logged after T = ``frames`` (and a partly written last
    line); returns the rows kept.

    A run resumed after a crash starts again from its last checkpoint: the rows written
    between that checkpoint and the crash are logged a second time by the resumed run, so
    the first copies go. The file is replaced whole, never left half-rewritten.
    """
    if not path.exists():
        return []
    whole = path.read_text()
    lines = complete_lines(whole)
    if not lines:
        return []
    reader = csv.DictReader(lines)
    kept_rows, kept_lines = [], [lines[0]]
    for row, line in zip(reader, lines[1:], strict=False):
        try:
            if int(row["frames"]) > frames:
                continue
        except (TypeError, ValueError):
            continue
        kept_rows.append(row)
        kept_lines.append(line)
    if len(kept_lines) != len(lines) or len(whole) != sum(map(len, lines)):
        write_text_atomically(path, "".join(kept_lines))
    return kept_rows


class Recorder:
    """Turns worker messages into rows, tracker points and the console's running numbers.

    ``resume_frames``: the T a resumed run restarts from; what was logged after it is
    dropped (TensorBoard's own tracker drops its points), and the console's recent score
    and last evaluation carry on from the rows that stay.
    """

    def __init__(self, run_dir: Path, score_window: int, metrics: list[str],
                 resume_frames: int | None = None, trackers: Sequence[Tracker] = ()) -> None:
        self.recent_scores: deque[float] = deque(maxlen=score_window)
        self.episode_count = 0
        self.last_eval: float | None = None
        if resume_frames is not None:
            episodes = keep_rows_up_to(run_dir / "episodes.csv", resume_frames)
            keep_rows_up_to(run_dir / "updates.csv", resume_frames)
            evals = keep_rows_up_to(run_dir / "eval.csv", resume_frames)
            self.recent_scores.extend(float(r["score"]) for r in episodes)
            self.episode_count = len(episodes)
            self.last_eval = float(evals[-1]["mean_score"]) if evals else None
        self.episodes = CsvLog(run_dir / "episodes.csv", EPISODE_FIELDS)
        self.updates = CsvLog(run_dir / "updates.csv", [*UPDATE_FIELDS, *metrics])
        self.evals = CsvLog(run_dir / "eval.csv", EVAL_FIELDS)
        self.trackers = list(trackers)

    def episode(self, worker: int, frames: int, wall: float, score: float, length: int,
                environment: int = 0) -> None:
        self.episodes.write({"worker": worker, "frames": frames, "wall_time": round(wall, 3),
                             "score": score, "episode_frames": length,
                             "environment": environment})
        self.recent_scores.append(score)
        self.episode_count += 1
        self._track({"episode/score": score, "episode/frames": length}, frames)

    def update(self, worker: int, frames: int, wall: float, stats: dict[str, float]) -> None:
        self.updates.write({"worker": worker, "frames": frames, "wall_time": round(wall, 3),
                            **stats})
        self._track({f"train/{key}": value for key, value in stats.items()}, frames)

    def evaluation(self, frames: int, wall: float, scores: list[float]) -> None:
        mean = sum(scores) / len(scores)
        self.last_eval = mean
        self.evals.write({"frames": frames, "wall_time": round(wall, 3), "mean_score": mean,
                          "episodes": len(scores), "scores": " ".join(f"{s:g}" for s in scores)})
        self._track({"eval/mean_score": mean}, frames)

    def speed(self, frames: int, frames_per_second: float) -> None:
        self._track({"train/frames_per_second": frames_per_second}, frames)

    def _track(self, values: dict[str, float], frames: int) -> None:
        for tracker in self.trackers:
            tracker.log(values, frames)

    def recent_mean(self) -> float | None:
        if not self.recent_scores:
            return None
        return sum(self.recent_scores) / len(self.recent_scores)

    def close(self) -> None:
        for log in (self.episodes, self.updates, self.evals):
            log.close()
        for tracker in self.trackers:
            tracker.close()
