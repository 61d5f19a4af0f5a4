"""The paper's figures from groups of runs (matplotlib, written as PNG)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from asyncrl.report.metrics import best_k, mean_curve, run_final_score  # noqa: E402

AXES = {"frames": ("frames (millions)", 1e-6), "hours": ("wall-clock hours", 1.0)}


def _grid(count: int) -> tuple[Any, list[Any]]:
    cols = min(count, 3)
    rows = (count + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    flat = list(axes.flat)
    for extra in flat[count:]:
        extra.set_visible(False)
    return fig, flat


def _decorate(ax: Any, title: str, xlabel: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


def best_k_curves(groups: dict[str, list[Any]], k: int, axis: str, path: Path,
                  window: int = 20) -> None:
    """Paper Figure 1 / S-torcs: the mean of each group's best k runs, against frames or
    wall-clock hours, with one standard deviation shaded."""
    label, scale = AXES[axis]
    fig, axes = _grid(len(groups))
    for ax, (name, runs) in zip(axes, groups.items(), strict=False):
        chosen = [r for r in best_k(runs, k, window) if len(r.scores)]
        if chosen:
            xs = [r.frames if axis == "frames" else r.hours for r in chosen]
            grid, mean, std = mean_curve(xs, [r.scores for r in chosen], window=window)
            ax.plot(grid * scale, mean, label=f"best {len(chosen)} of {len(runs)}")
            ax.fill_between(grid * scale, mean - std, mean + std, alpha=0.25)
        _decorate(ax, name, label, "score")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def score_vs_lr(groups: dict[str, list[Any]], path: Path, window: int = 20) -> None:
    """Paper Figure 2 / S-stability / S-mujoco: one point per run; failed and diverged runs
    are crosses on the bottom edge."""
    fig, axes = _grid(len(groups))
    for ax, (name, runs) in zip(axes, groups.items(), strict=False):
        good: list[tuple[float, float]] = []
        for r in runs:
            score = run_final_score(r, window)
            if score is not None:
                good.append((r.lr, score))
        bad = [r.lr for r in runs if run_final_score(r, window) is None]
        if good:
            ax.scatter([g[0] for g in good], [g[1] for g in good], s=14, label="final score")
        if bad:
            low = min((g[1] for g in good), default=0.0)
            ax.scatter(bad, [low] * len(bad), marker="x", color="red", label="failed/diverged")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        _decorate(ax, name, "learning rate", "score")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def score_by_rank(panels: dict[str, dict[str, list[Any]]], path: Path, window: int = 20) -> None:
    """Paper Figure S-optimization: each sweep's final scores sorted in descending order,
    sweeps that differ in one setting overlaid."""
    fig, axes = _grid(len(panels))
    for ax, (title, sweeps) in zip(axes, panels.items(), strict=False):
        for label, runs in sweeps.items():
            scores = sorted((s for s in (run_final_score(r, window) for r in runs)
                             if s is not None), reverse=True)
            ax.plot(range(1, len(scores) + 1), scores, marker=".", label=label)
        _decorate(ax, title, "model rank", "final score")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def scaling_curves(title: str, by_workers: Mapping[int, Sequence[Any]], k: int, axis: str,
                   path: Path, window: int = 20) -> None:
    """Paper Figures 3-4: the best-k mean curve of each worker count on one axis."""
    label, scale = AXES[axis]
    fig, ax = plt.subplots(figsize=(6, 4))
    for workers, runs in sorted(by_workers.items()):
        chosen = [r for r in best_k(runs, k, window) if len(r.scores)]
        if not chosen:
            continue
        xs = [r.frames if axis == "frames" else r.hours for r in chosen]
        grid, mean, _ = mean_curve(xs, [r.scores for r in chosen], window=window)
        ax.plot(grid * scale, mean, label=f"{workers} workers")
    _decorate(ax, title, label, "score")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


LINE_STYLES = ("-", "--", ":", "-.")


def run_curves(runs: Sequence[tuple[Any, ...]], path: Path, window: int = 20,
               marks: Sequence[float] = ()) -> None:
    """Each run's own curve, one line a run (not a group's mean): the mean of its last
    ``window`` training episodes against frames, and against minutes from the command.
    ``runs`` holds (label, frames, minutes, rolling means), each optionally followed by
    (colour number, style number) where a run draws several lines: a colour for each run,
    a style for each kind of line; ``marks`` draws dotted levels."""
    fig, (by_frames, by_minutes) = plt.subplots(1, 2, figsize=(12, 4.2))
    for label, frames, minutes, means, *group in runs:
        look = ({"color": f"C{group[0] % 10}", "ls": LINE_STYLES[group[1] % len(LINE_STYLES)]}
                if group else {})
        by_frames.plot(frames * 1e-6, means, label=label, **look)
        by_minutes.plot(minutes, means, label=label, **look)
    for ax, xlabel in ((by_frames, "frames (millions)"),
                       (by_minutes, "minutes from the command")):
        for level in marks:
            ax.axhline(level, color="grey", ls=":", lw=1)
        _decorate(ax, "", xlabel, f"mean of the last {window} training episodes")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
