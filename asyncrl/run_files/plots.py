"""The learning curve a finished run leaves beside its CSV files."""

from __future__ import annotations

import csv
from pathlib import Path

from asyncrl.run_files.recorder import complete_lines


def read_columns(path: Path, columns: list[str], optional: dict[str, float] | None = None
                 ) -> dict[str, list[float]]:
    """The rows that hold every one of ``columns``; each ``optional`` column read beside
    them, its default where a row (or the whole file) has none."""
    extra = optional or {}
    out: dict[str, list[float]] = {c: [] for c in [*columns, *extra]}
    if not path.exists():
        return out
    for row in csv.DictReader(complete_lines(path.read_text())):
        if any(row.get(c) in (None, "") for c in columns):
            continue
        for c in columns:
            out[c].append(float(row[c]))
        for c, default in extra.items():
            value = row.get(c)
            out[c].append(default if value in (None, "") else float(value))
    return out


def rolling_mean(values: list[float], window: int) -> list[float]:
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def plot_learning_curve(run_dir: Path, title: str, window: int = 20) -> Path | None:
    """Score against frames: each episode, their rolling mean, and evaluations if any."""
    episodes = read_columns(run_dir / "episodes.csv", ["frames", "score"])
    evals = read_columns(run_dir / "eval.csv", ["frames", "mean_score"])
    if not episodes["frames"]:
        return None
    order = sorted(range(len(episodes["frames"])), key=episodes["frames"].__getitem__)
    frames = [episodes["frames"][i] / 1e6 for i in order]
    scores = [episodes["score"][i] for i in order]
    # imported here: matplotlib costs ~0.4 s of a run's start, and a run draws when it ends
    import matplotlib

    matplotlib.use("Agg")  # runs write PNGs on machines with no display
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(frames, scores, ".", alpha=0.25, color="tab:blue", label="training episode")
    ax.plot(frames, rolling_mean(scores, window), color="tab:blue",
            label=f"mean of last {window}")
    if evals["frames"]:
        ax.plot([f / 1e6 for f in evals["frames"]], evals["mean_score"], "o-",
                color="tab:orange", label="evaluation")
    ax.set_xlabel("frames (millions)")
    ax.set_ylabel("score")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    fig.tight_layout()
    out = run_dir / "learning_curve.png"
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
