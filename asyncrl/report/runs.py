"""Finding run directories under a path and reading what each left.

A run directory holds ``config.yaml`` and ``episodes.csv`` (and, from runs of this version
on, ``status.json``). Runs are grouped by everything but ``lr``, ``seed`` and the other keys
of ``VARYING`` (``grouping.py``): the runs of one group are one sweep, the paper's unit of
comparison.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from asyncrl.envs.family import env_label
from asyncrl.run_files.plots import read_columns
from asyncrl.run_files.run_status import RUNNING, read_status

# keys that do not make two runs different experiments
VARYING = ("lr", "seed", "resume", "log", "eval", "checkpoint", "serial", "max_worker_restarts",
           "stall_seconds", "total_frames")


@dataclass
class Run:
    path: Path
    config: dict[str, Any]
    frames: np.ndarray       # T at the end of each training episode, in order
    hours: np.ndarray        # wall-clock hours at the same moments
    scores: np.ndarray       # raw episode scores
    status: str              # finished, interrupted, failed, diverged, or unknown
    reason: str = ""
    recorded_frames: int | None = None  # T in status.json: later than the last episode's
    evaluation: float | None = None  # the final weights' mean score (evaluation.json)
    evaluation_episodes: int = 0     # ... over this many episodes

    @property
    def lr(self) -> float:
        return float(self.config["lr"])

    @property
    def workers(self) -> int:
        return int(self.config["workers"])

    @property
    def env_name(self) -> str:
        return env_label(OmegaConf.create(self.config["env"]))

    def experiment(self, ignore: tuple[str, ...] = ()) -> str:
        """What this run is a sample of: the config without the keys a sweep varies."""
        parts = [] if "env" in ignore else [self.env_name]
        parts += [self.config["algo"]["name"], self.config["network"]["name"],
                  self.config["optimizer"]["name"]]
        if "workers" not in ignore:
            parts.append(f"{self.workers} workers")
        return ", ".join(parts)


@dataclass
class Found:
    runs: list[Run] = field(default_factory=list)
    left_out: list[tuple[Path, str]] = field(default_factory=list)


def _pid_alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError):
        return False
    return True


def read_episodes(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frames, hours and scores in frame order; a partly written last line is left out."""
    frames, hours, scores, _, _ = read_episodes_and_sources(path)
    return frames, hours, scores


def read_episodes_and_sources(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   np.ndarray, np.ndarray | None]:
    """``read_episodes``, the worker of each episode and its environment within the worker
    (None for a file from before that column; -1 in a row without it), from one read in
    one order."""
    with_environment = "environment" in episode_header(path)
    columns = read_columns(path, ["frames", "wall_time", "score", "worker"],
                           optional={"environment": -1})
    order = np.argsort(np.array(columns["frames"]), kind="stable")
    frames = np.array(columns["frames"], dtype=np.int64)[order]
    hours = np.array(columns["wall_time"])[order] / 3600
    scores = np.array(columns["score"])[order]
    workers = np.array(columns["worker"], dtype=np.int64)[order]
    environments = (np.array(columns["environment"], dtype=np.int64)[order]
                    if with_environment else None)
    return frames, hours, scores, workers, environments


def episode_header(path: Path) -> list[str]:
    """The columns an episodes.csv has (none for a missing or empty file)."""
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return next(csv.reader(handle), None) or []


def natural_order(path: Path) -> list[Any]:
    """``sweep/2`` before ``sweep/10``: Optuna's and Hydra's basic sweeper's runs are
    numbered directories."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in path.parts]


def find_runs(roots: list[Path]) -> Found:
    """Every run directory under ``roots``; runs still going or unreadable are left out,
    each with the reason."""
    found = Found()
    seen: set[Path] = set()
    for root in roots:
        for config_file in sorted(Path(root).rglob("config.yaml"), key=natural_order):
            run_dir = config_file.parent
            if run_dir.name == ".hydra" or run_dir in seen:
                continue
            seen.add(run_dir)
            if not (run_dir / "episodes.csv").exists():
                found.left_out.append((run_dir, "no episodes.csv"))
                continue
            status = read_status(run_dir) or {}
            state = status.get("status", "unknown")
            if state == RUNNING:
                if _pid_alive(status.get("pid")):
                    found.left_out.append((run_dir, "still in progress"))
                    continue
                state, status["reason"] = "interrupted", "stopped without a final status"
            try:
                config = OmegaConf.to_container(OmegaConf.load(config_file), resolve=True)
                frames, hours, scores = read_episodes(run_dir / "episodes.csv")
            except Exception as exc:  # a half-written or foreign directory
                found.left_out.append((run_dir, f"unreadable: {type(exc).__name__}: {exc}"))
                continue
            assert isinstance(config, dict)
            recorded = status.get("frames")
            found.runs.append(Run(run_dir, {str(k): v for k, v in config.items()}, frames,
                                  hours, scores, state, str(status.get("reason", "")),
                                  int(recorded) if isinstance(recorded, int | float) else None,
                                  *read_evaluation(run_dir)))
    return found


def read_evaluation(run_dir: Path) -> tuple[float | None, int]:
    """The mean score of ``RUN/evaluation.json`` (``eval.final_episodes``, ``asyncrl-eval``)
    and its number of episodes, where the file is there and whole."""
    try:
        record = json.loads((run_dir / "evaluation.json").read_text())
        mean, episodes = record["mean"], len(record["scores"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, 0
    return (float(mean), episodes) if isinstance(mean, int | float) else (None, 0)
