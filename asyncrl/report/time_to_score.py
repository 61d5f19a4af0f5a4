"""When a run first reached a score: the frames, and the minutes from the command.

The score is the mean of the last ``window`` training episodes, as the console shows it;
it counts once ``window`` episodes have finished. The minutes count from the command, not
from the first frame: a run's ``wall_time`` starts when its shared model is built, so the
seconds before that (Python, imports, config) are added back from the launcher's
first-frame line where the log has one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asyncrl.errors import UserError
from asyncrl.report.runs import read_episodes_and_sources
from asyncrl.run_files.plots import rolling_mean
from asyncrl.run_files.startup import BEFORE_THE_CLOCK, first_frame_phases

# the launcher's line for each value-based worker's draw, e.g.
# "[worker 1] nstep_q: final epsilon 0.01 (annealed from 1 over ..."
# (a serial run's one worker logs in the launcher's process, without "[worker 0] ")
FINAL_EPSILON = re.compile(r"(?:\[worker (\d+)\] )?\w+: final epsilon ([-+.\deE]+) \(")
# and with algo.epsilon_per_environment, each of its environments' draws in order:
# "[worker 1] nstep_q: final epsilons per environment 0.01 0.1 0.5 ... (annealed from ..."
FINAL_EPSILONS_PER_ENVIRONMENT = re.compile(
    r"(?:\[worker (\d+)\] )?\w+: final epsilons per environment ([-+.\deE ]+?) \(")
# with algo.epsilon_redraw the draws above are only the first: "..., drawn again as each
# episode begins (annealed ...", and neither pattern above matches it
REDRAWN = re.compile(r"final epsilons? (?:per environment )?[-+.\deE ]+, drawn again")


@dataclass(frozen=True)
class Reached:
    score: float
    frames: int | None  # None: not reached
    minutes: float | None


def seconds_before_the_clock(log_text: str) -> float:
    phases = first_frame_phases(log_text) or {}
    return sum(phases.get(name, 0.0) for name in BEFORE_THE_CLOCK)


def rolling_window_means(scores: np.ndarray, window: int) -> np.ndarray:
    """The mean of each full run of ``window`` consecutive episodes, in episode order (the
    learning curve's rolling mean without its first, partial windows)."""
    return np.array(rolling_mean([float(s) for s in scores], window)[window - 1:])


def first_reached(frames: np.ndarray, hours: np.ndarray, scores: np.ndarray,
                  targets: Sequence[float], window: int = 20, offset_s: float = 0.0
                  ) -> list[Reached]:
    means = rolling_window_means(scores, window)
    found = []
    for target in targets:
        hit = np.nonzero(means >= target)[0]
        if len(hit) == 0:
            found.append(Reached(target, None, None))
            continue
        at = hit[0] + window - 1  # the episode that completed the first such window
        found.append(Reached(target, int(frames[at]), (hours[at] * 3600 + offset_s) / 60))
    return found


@dataclass(frozen=True)
class RunEpisodes:
    """A run's episodes in frame order, the seconds before its wall_time began, and its
    log ("" where it has none)."""

    frames: np.ndarray
    hours: np.ndarray
    scores: np.ndarray
    workers: np.ndarray
    environments: np.ndarray | None  # None: an episodes.csv from before the column
    offset_s: float
    log: str


def _read_run(run_dir: Path) -> RunEpisodes:
    frames, hours, scores, workers, environments = read_episodes_and_sources(
        run_dir / "episodes.csv")
    log_file = run_dir / "asyncrl.log"
    log = log_file.read_text(encoding="utf-8") if log_file.exists() else ""
    return RunEpisodes(frames, hours, scores, workers, environments,
                       seconds_before_the_clock(log), log)


def final_epsilons(log_text: str) -> dict[int, str]:
    """Each worker's final epsilon as the log names it (the last line wins: a resumed slot
    keeps its draw, so a later line repeats it)."""
    return {int(worker or 0): epsilon for worker, epsilon in FINAL_EPSILON.findall(log_text)}


def final_epsilons_per_environment(log_text: str) -> dict[int, list[str]]:
    """Each worker's environments' final epsilons, in environment order, where the run
    drew one per environment (the last line wins, as above)."""
    return {int(worker or 0): draws.split()
            for worker, draws in FINAL_EPSILONS_PER_ENVIRONMENT.findall(log_text)}


def episode_epsilons(run: RunEpisodes) -> tuple[list[str | None], str]:
    """The final epsilon each episode was played at, and what a draw belongs to ("worker"
    or "environment"); None where the log has no draw for it, or the run drew one per
    environment and its episodes.csv does not say which environment played."""
    per_environment = final_epsilons_per_environment(run.log)
    per_worker = final_epsilons(run.log)
    found: list[str | None] = []
    for i, worker in enumerate(run.workers.tolist()):
        if worker in per_environment:
            draws = per_environment[worker]
            environment = None if run.environments is None else int(run.environments[i])
            found.append(draws[environment] if environment is not None
                         and 0 <= environment < len(draws) else None)
        else:
            found.append(per_worker.get(worker))
    return found, "environment" if per_environment else "worker"


def run_time_to_scores(run_dir: Path, targets: Sequence[float], window: int = 20
                       ) -> list[Reached]:
    run = _read_run(run_dir)
    return first_reached(run.frames, run.hours, run.scores, targets, window, run.offset_s)


def describe(reached: Reached, last_frames: int) -> str:
    if reached.frames is None or reached.minutes is None:
        return f"not by {last_frames / 1e6:.2f}M"
    return f"{reached.frames / 1e6:.2f}M, {reached.minutes:.1f} min"


def time_to_table(run_dirs: Sequence[Path], targets: Sequence[float], window: int = 20,
                  by_worker: bool = False, by_epsilon: bool = False) -> str:
    """A markdown table: per run, the frames and minutes to each target score; with
    ``by_worker`` a row per worker under each run's, its own episodes' mean of ``window``
    (a value-based worker plays at its own final epsilon, which its row names); with
    ``by_epsilon`` a row per final epsilon, the episodes played at it (by the workers that
    drew it, or by the environments, with ``algo.epsilon_per_environment``)."""
    head = " | ".join(f"{t:+g}" for t in targets)
    lines = [f"| run | frames | {head} |", "| --- | ---: |" + " ---: |" * len(targets)]
    for run_dir in run_dirs:
        run = _read_run(run_dir)
        lines.append(_table_row(str(run_dir), run, None, targets, window))
        if by_worker:
            epsilons = final_epsilons(run.log)
            for worker in np.unique(run.workers):
                name = f"{run_dir} worker {worker}"
                if int(worker) in epsilons:
                    name += f" (final ε {epsilons[int(worker)]})"
                lines.append(_table_row(name, run, run.workers == worker, targets, window))
        if by_epsilon:
            lines += _epsilon_rows(run_dir, run, targets, window)
    return "\n".join(lines)


def _epsilon_rows(run_dir: Path, run: RunEpisodes, targets: Sequence[float],
                  window: int) -> list[str]:
    groups, owner, unknown = _epsilon_groups(run)
    if not groups:
        why = ("each environment drew its final ε again at each episode"
               if REDRAWN.search(run.log)
               else "its episodes.csv does not say which environment played"
               if owner == "environment" else "its log names no final epsilon")
        return [f"| {run_dir}: no row per final ε ({why}) |" + " |" * (len(targets) + 1)]
    # what played them: workers, or (worker, environment) pairs (known wherever a group is)
    sources: list[Any] = run.workers.tolist()
    if owner == "environment" and run.environments is not None:
        sources = list(zip(sources, run.environments.tolist(), strict=True))
    rows = []
    for epsilon, mine in groups:
        count = len({source for source, m in zip(sources, mine, strict=True) if m})
        name = f"{run_dir} final ε {epsilon} ({count} {owner}{'s' if count != 1 else ''})"
        rows.append(_table_row(name, run, mine, targets, window))
    if unknown:  # so that the rows above need not add up to the run's
        rows.append(f"| {run_dir}: {unknown} episodes at no known final ε left out |"
                    + " |" * (len(targets) + 1))
    return rows


def _epsilon_groups(run: RunEpisodes) -> tuple[list[tuple[str, np.ndarray]], str, int]:
    """(final ε, which episodes) for each ε the run's episodes were played at, smallest
    first; what a draw belongs to (``episode_epsilons``); how many episodes have none."""
    epsilons, owner = episode_epsilons(run)
    played_at = np.array(epsilons, dtype=object)
    known = sorted({e for e in epsilons if e is not None}, key=float)
    return ([(epsilon, played_at == epsilon) for epsilon in known], owner,
            sum(e is None for e in epsilons))


def _table_row(name: str, run: RunEpisodes, mine: np.ndarray | None,
               targets: Sequence[float], window: int) -> str:
    """A row for the run's episodes, or for those of them that ``mine`` selects."""
    frames, hours, scores = ((run.frames, run.hours, run.scores) if mine is None
                             else (run.frames[mine], run.hours[mine], run.scores[mine]))
    last = int(frames[-1]) if len(frames) else 0
    reached = first_reached(frames, hours, scores, targets, window, run.offset_s)
    cells = [describe(r, last) for r in reached]
    return f"| {name} | {last / 1e6:.2f}M | " + " | ".join(cells) + " |"


def curves_figure(run_dirs: Sequence[Path], path: Path, window: int = 20,
                  marks: Sequence[float] = (), by_epsilon: bool = False) -> Path:
    """``run_curves`` for these runs, each labelled by its directory's name (its path where
    two names agree), minutes counted as ``time_to_table`` counts them; with ``by_epsilon``
    a line per final ε of each run instead (the episodes ``time_to_table``'s ε rows read),
    in the run's colour, in one style for each ε across the runs."""
    from asyncrl.report.figures import run_curves  # matplotlib: only when a figure is drawn

    names = [d.name for d in run_dirs]
    runs = [_read_run(run_dir) for run_dir in run_dirs]
    groups = [_curve_groups(run, by_epsilon) for run in runs]
    epsilons = sorted({eps for found in groups for eps, _ in found if eps}, key=float)
    lines: list[tuple[Any, ...]] = []
    short = []
    for number, (run_dir, name, run, found) in enumerate(
            zip(run_dirs, names, runs, groups, strict=True)):
        label = name if names.count(name) == 1 else str(run_dir)
        drawn = 0
        for epsilon, mine in found:
            frames, hours, scores = run.frames[mine], run.hours[mine], run.scores[mine]
            if len(scores) < window:
                continue
            means = rolling_window_means(scores, window)
            tail = slice(window - 1, None)  # the episode that completes each window
            minutes = (hours[tail] * 3600 + run.offset_s) / 60
            look = (number, epsilons.index(epsilon)) if by_epsilon else ()
            lines.append((label + (f" ε {epsilon}" if by_epsilon else ""), frames[tail],
                          minutes, means, *look))
            drawn += 1
        if not drawn:
            short.append(str(run_dir))
    if short:
        print(f"left out (fewer than {window} episodes{' at any final ε' * by_epsilon}): "
              f"{', '.join(short)}")
    if not lines:
        raise UserError(f"no run has {window} episodes yet: nothing to draw")
    path.parent.mkdir(parents=True, exist_ok=True)
    run_curves(lines, path, window, marks)
    return path


def _curve_groups(run: RunEpisodes, by_epsilon: bool) -> list[tuple[str, np.ndarray]]:
    """(final ε, which episodes) for each line a run draws; one line of every episode,
    with no ε, unless ``by_epsilon``."""
    if not by_epsilon:
        return [("", np.ones(len(run.scores), dtype=bool))]
    return _epsilon_groups(run)[0]
