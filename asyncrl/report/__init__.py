"""``asyncrl-report DIR [DIR ...]``: the paper's figures and tables from runs and sweeps.

    asyncrl-report multirun/2026-11-26/10-00-00               # one sweep
    asyncrl-report multirun/opt_* --out reports/optimizers    # several, overlaid by rank
    asyncrl-report multirun/pong_sweep --status               # progress of a sweep

Writes into ``--out`` (default: ``DIR/report``): ``report.md`` and the PNGs it shows.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from asyncrl.errors import UserError
from asyncrl.report import figures
from asyncrl.report.grouping import group_runs
from asyncrl.report.metrics import (
    best_k,
    human_normalised,
    mean_curve,
    run_final_score,
    speedups,
    time_to_reach,
)
from asyncrl.report.runs import Found, Run, find_runs
from asyncrl.report.studies import study_lines
from asyncrl.run_files.atomic import write_text_atomically
from asyncrl.run_files.plots import read_columns

PAPER_COLUMNS = ("dqn", "gorila", "double", "dueling", "prioritized", "a3c_ff_1day", "a3c_ff",
                 "a3c_lstm")
# Mnih et al. (2016), Table 1: mean and median human-normalised score over 57 games, human
# starts; the columns of Table S3 each row names
PAPER_TABLE_1 = {"dqn": ("DQN, 8 days on GPU", 121.9, 47.5),
                 "a3c_ff_1day": ("A3C FF, 1 day on CPU", 344.1, 68.2),
                 "a3c_ff": ("A3C FF, 4 days on CPU", 496.8, 116.6),
                 "a3c_lstm": ("A3C LSTM, 4 days on CPU", 623.0, 112.6)}
UNIFORM_FRACTION = 0.9  # entropy above this share of the start's: the policy is near uniform


def read_data_csv(name: str, key: str = "game") -> dict[str, dict[str, str]]:
    text = resources.files("asyncrl.data").joinpath(name).read_text()
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    return {row[key]: row for row in rows}


def _fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None or (isinstance(value, float) and np.isnan(value)) else (
        f"{value:,.{digits}f}")


def _sweep_table(groups: dict[str, list[Run]], k: int, window: int) -> list[str]:
    lines = ["| experiment | runs | finished | failed/diverged | best final score (lr) | "
             f"best-{k} mean final score | median final score |",
             "| --- | ---: | ---: | ---: | --- | ---: | ---: |"]
    for name, runs in groups.items():
        scores = [(run_final_score(r, window), r) for r in runs]
        valid = [(s, r) for s, r in scores if s is not None]
        bad = sum(r.status in ("failed", "diverged") for r in runs)
        finished = sum(r.status == "finished" for r in runs)
        best = max(valid, key=lambda t: t[0]) if valid else None
        top = [s for s in (run_final_score(r, window) for r in best_k(runs, k, window))
               if s is not None]
        lines.append(
            f"| {name} | {len(runs)} | {finished} | {bad} | "
            + (f"{best[0]:,.1f} ({best[1].lr:.2g})" if best else "–")
            + f" | {_fmt(float(np.mean(top)) if top else None)} | "
            + f"{_fmt(float(np.median([s for s, _ in valid])) if valid else None)} |")
    return lines


def _worker_curves(members: list[Run], k: int, window: int
                   ) -> tuple[dict[int, list[Run]], dict[int, Any]]:
    """A group's runs by worker count, and each count's best-k mean curve against hours."""
    by_workers: dict[int, list[Run]] = defaultdict(list)
    for run in members:
        by_workers[run.workers].append(run)
    curves = {}
    for workers, group in by_workers.items():
        chosen = [r for r in best_k(group, k, window) if len(r.scores)]
        if chosen:
            curves[workers] = mean_curve([r.hours for r in chosen],
                                         [r.scores for r in chosen], window=window)
    return by_workers, curves


def _scaling(runs: list[Run], k: int, window: int, reference: float | None,
             out: Path) -> list[str]:
    """Groups that differ only in ``workers``: data efficiency and speed-up (Table 2)."""
    lines: list[str] = []
    for index, (name, members) in enumerate(group_runs(runs, ("workers",)).items()):
        by_workers, curves = _worker_curves(members, k, window)
        if len(curves) < 2:
            continue
        target = reference if reference is not None else min(
            float(np.nanmax(c[1])) for c in curves.values())
        times = {w: time_to_reach(c[0], c[1], target) for w, c in curves.items()}
        ups = speedups(times)
        picture, by_hours = f"scaling_{index}.png", f"scaling_hours_{index}.png"
        figures.scaling_curves(name, by_workers, k, "frames", out / picture, window)
        figures.scaling_curves(name, by_workers, k, "hours", out / by_hours, window)
        lines += [f"### {name}", "",
                  f"Reference score {target:,.2f} "
                  + ("(given)" if reference is not None else
                     "(the highest score every worker count's best-k mean reached)") + ".", "",
                  "| workers | hours to the reference | speed-up over the fewest workers |",
                  "| ---: | ---: | ---: |"]
        lines += [f"| {w} | {_fmt(times[w], 3)} | {_fmt(ups[w], 2)} |" for w in sorted(times)]
        lines += ["", f"![data efficiency (Figure 3)]({picture})", "",
                  f"![score against hours (Figure 4)]({by_hours})", ""]
    return lines


def _human_table(runs: list[Run], k: int, window: int) -> list[str]:
    atari = [r for r in runs if r.config["env"]["family"] == "atari"]
    if not atari:
        return []
    reference = read_data_csv("atari_reference.csv")
    paper = read_data_csv("paper_table_s3.csv")
    lines = ["| game | experiment | ours: best-k mean final score | human-normalised % | "
             + " | ".join(f"paper {c}" for c in PAPER_COLUMNS) + " |",
             "| --- | --- | ---: | ---: | " + " | ".join("---:" for _ in PAPER_COLUMNS) + " |"]
    for name, members in group_runs(atari).items():
        game = members[0].config["env"]["game"]
        top = [s for s in (run_final_score(r, window) for r in best_k(members, k, window))
               if s is not None]
        score = float(np.mean(top)) if top else None
        normalised = None
        if score is not None and game in reference:
            normalised = human_normalised(score, float(reference[game]["random"]),
                                          float(reference[game]["human"]))
        row = paper.get(game, {})
        cells = [row.get(c) or "–" for c in PAPER_COLUMNS]
        lines.append(f"| {game} | {name} | {_fmt(score)} | {_fmt(normalised)} | "
                     + " | ".join(cells) + " |")
    return lines


def _entropy_share(run: Run) -> float | None:
    """A3C's policy entropy over the last tenth of its updates as a share of the first
    rows' (a new policy is near uniform): near 1, the policy never left uniform."""
    if run.config["algo"]["name"] != "a3c":
        return None
    try:
        values = read_columns(run.path / "updates.csv", ["entropy"])["entropy"]
    except (OSError, ValueError):
        return None
    if len(values) < 40:
        return None
    start = float(np.mean(values[:20]))
    return float(np.mean(values[-max(20, len(values) // 10):])) / start if start > 0 else None


def _games_table(runs: list[Run], window: int) -> list[str]:
    """Paper Table 1 for runs over games: per method (every key but the game), the mean and
    median human-normalised evaluation score of the final weights, beside the paper's
    columns on the same games and its own 57-game figures; then each game's row."""
    atari = [r for r in runs if r.config["env"]["family"] == "atari"]
    reference = read_data_csv("atari_reference.csv")
    paper = read_data_csv("paper_table_s3.csv")
    lines: list[str] = []
    for name, members in group_runs(atari, ("env",)).items():
        by_game: dict[str, list[Run]] = defaultdict(list)
        for run in members:
            by_game[run.config["env"]["game"]].append(run)
        evaluated = {g: [r.evaluation for r in rs if r.evaluation is not None]
                     for g, rs in by_game.items()}
        games = sorted(g for g, scores in evaluated.items() if scores and g in reference)
        if len(by_game) < 2 or not games:
            continue

        def normalised(game: str, score: float) -> float:
            row = reference[game]
            return human_normalised(score, float(row["random"]), float(row["human"]))

        ours = [normalised(g, float(np.mean(evaluated[g]))) for g in games]
        lines += [f"### {name}", "",
                  f"{len(games)} games evaluated of the paper's {len(paper)}.", "",
                  "| method | games | mean | median |", "| --- | ---: | ---: | ---: |",
                  f"| asyncrl (this report) | {len(games)} | {np.mean(ours):,.1f} % | "
                  f"{np.median(ours):,.1f} % |"]
        for column, (label, mean57, median57) in PAPER_TABLE_1.items():
            theirs = [normalised(g, float(paper[g][column])) for g in games
                      if g in paper and paper[g].get(column)]
            if theirs:
                lines.append(f"| paper: {label}, these games | {len(theirs)} | "
                             f"{np.mean(theirs):,.1f} % | {np.median(theirs):,.1f} % |")
            lines.append(f"| paper: {label}, Table 1 | 57 | {mean57:,.1f} % | {median57:,.1f} % |")
        lines += ["", "| game | runs | evaluation (final weights) | episodes | training, last "
                  f"{window} | random | human | human-normalised | entropy, end / start |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for game in sorted(by_game):
            group = by_game[game]
            scores = evaluated[game]
            train = [s for s in (run_final_score(r, window) for r in group) if s is not None]
            shares = [s for s in (_entropy_share(r) for r in group) if s is not None]
            row = reference.get(game)
            score = float(np.mean(scores)) if scores else None
            lines.append(
                f"| {game} | {len(group)} | {_fmt(score)} | "
                f"{sum(r.evaluation_episodes for r in group)} | "
                f"{_fmt(float(np.mean(train)) if train else None)} | "
                f"{_fmt(float(row['random'])) if row else '–'} | "
                f"{_fmt(float(row['human'])) if row else '–'} | "
                + (f"{normalised(game, score):,.1f} %" if score is not None and row else "–")
                + " | " + (f"{np.mean(shares):.2f}"
                           + (" (near uniform)" if np.mean(shares) > UNIFORM_FRACTION else "")
                           if shares else "–") + " |")
        missing = sorted(set(paper) - set(by_game))
        if missing:
            lines += ["", f"Not run yet ({len(missing)}): {', '.join(missing)}."]
        lines.append("")
    return lines


def _speedups_over_games(runs: list[Run], k: int, window: int) -> list[str]:
    """Paper Table 2: each game's speed-up of n workers over the fewest, to that game's
    own reference score (the highest every worker count's best-k mean reached), then
    averaged over the games run with the same worker counts."""
    lines: list[str] = []
    for method, members in group_runs(runs, ("env", "workers")).items():
        by_game: dict[str, list[Run]] = defaultdict(list)
        for run in members:
            by_game[run.env_name].append(run)
        tables: dict[tuple[int, ...], dict[str, dict[int, float | None]]] = defaultdict(dict)
        for game, game_runs in by_game.items():
            _, curves = _worker_curves(game_runs, k, window)
            if len(curves) < 2:
                continue
            target = min(float(np.nanmax(c[1])) for c in curves.values())
            times = {w: time_to_reach(c[0], c[1], target) for w, c in curves.items()}
            tables[tuple(sorted(curves))][game] = speedups(times)
        for counts, games in tables.items():
            if len(games) < 2:
                continue
            means = []
            for w in counts:
                values = [ups[w] for ups in games.values() if ups.get(w) is not None]
                means.append(_fmt(float(np.mean(values)), 2) if values else "–")
            lines += [f"### {method}: averaged over {len(games)} games "
                      f"({', '.join(sorted(games))})", "",
                      "| workers | " + " | ".join(str(w) for w in counts) + " |",
                      "| --- | " + " | ".join("---:" for _ in counts) + " |",
                      "| mean speed-up | " + " | ".join(means) + " |", ""]
    return lines


TORCS_MATCH = ("track", "car", "max_episode_seconds", "laps")


def _torcs_table(runs: list[Run], k: int, window: int) -> list[str]:
    """Best-k mean final score as a percentage of the scripted driver's, where the run
    raced what the reference was measured on."""
    torcs = [r for r in runs if r.config["env"]["family"] == "torcs"]
    if not torcs:
        return []
    reference = read_data_csv("torcs_reference.csv", key="setting")
    lines = ["| setting | experiment | ours: best-k mean final score (m) | scripted driver (m) "
             "| % of the scripted driver |", "| --- | --- | ---: | ---: | ---: |"]
    for name, members in group_runs(torcs).items():
        env = members[0].config["env"]
        top = [s for s in (run_final_score(r, window) for r in best_k(members, k, window))
               if s is not None]
        score = float(np.mean(top)) if top else None
        row = reference.get(env["setting"])
        same = row is not None and all(float(row[key]) == float(env[key])
                                       if key in ("max_episode_seconds", "laps")
                                       else row[key] == env[key] for key in TORCS_MATCH)
        ref = float(row["score"]) if same and row is not None else None
        percent = 100.0 * score / ref if score is not None and ref else None
        lines.append(f"| {env['setting']} | {name} | {_fmt(score)} | {_fmt(ref)} | "
                     f"{_fmt(percent)} |")
    return lines


def build_report(roots: list[Path], out: Path, k: int = 5, window: int = 20,
                 reference: float | None = None) -> Path:
    found = find_runs(roots)
    if not found.runs:
        why = "; ".join(f"{p}: {r}" for p, r in found.left_out[:5])
        raise UserError(f"no finished or stopped runs under {', '.join(map(str, roots))}"
                        + (f" (left out: {why})" if why else ""))
    out.mkdir(parents=True, exist_ok=True)
    groups = group_runs(found.runs)
    figures.best_k_curves(groups, k, "frames", out / "curves_frames.png", window)
    figures.best_k_curves(groups, k, "hours", out / "curves_hours.png", window)
    figures.score_vs_lr(groups, out / "score_vs_lr.png", window)
    panels: dict[str, dict[str, list[Run]]] = defaultdict(dict)
    for runs in groups.values():
        first = runs[0]
        panel = (f"{first.env_name}, {first.config['algo']['name']}, "
                 f"{first.config['network']['name']}, {first.workers} workers")
        panels[panel][first.config["optimizer"]["name"]] = runs
    figures.score_by_rank(dict(panels), out / "score_by_rank.png", window)

    lines = ["# asyncrl report", "",
             f"Runs from {', '.join(f'`{r}`' for r in roots)}: {len(found.runs)} read, "
             f"{len(found.left_out)} left out. Final score: the mean of a run's last {window} "
             f"training episodes (raw scores); best-k: the {k} runs with the highest final "
             "scores.", ""]
    if found.left_out:
        lines += ["Left out:", ""] + [f"- `{p}`: {r}" for p, r in found.left_out] + [""]
    failed = [r for r in found.runs if r.status in ("failed", "diverged")]
    if failed:
        lines += ["Runs that failed or diverged (no final score):", ""]
        lines += [f"- `{r.path}` (lr {r.lr:.3g}): {r.status}, {r.reason}" for r in failed]
        lines += [""]
    lines += ["## Sweeps", ""] + _sweep_table(groups, k, window) + [""]
    studies = study_lines(roots)
    if studies:
        lines += ["## Tuning studies", "",
                  "What the tuning sweeper chose, by the runs' `objective` "
                  "(`optimization_results.yaml`):", ""] + studies + [""]
    lines += ["## Best-k mean learning curves (paper Figure 1)", "",
              "![against frames](curves_frames.png)", "", "![against hours](curves_hours.png)",
              "", "## Final score against learning rate (paper Figure 2)", "",
              "![score vs lr](score_vs_lr.png)", "",
              "## Final scores by rank (paper Figure S-optimization)", "",
              "![by rank](score_by_rank.png)", ""]
    scaling = _scaling(found.runs, k, window, reference, out)
    if scaling:
        lines += ["## Workers: data efficiency and speed-up (paper Table 2, Figures 3-4)", ""]
        lines += scaling
    over_games = _speedups_over_games(found.runs, k, window)
    if over_games:
        lines += ["## Speed-ups averaged over games (paper Table 2)", "",
                  "Each game's reference is its own: the highest score every worker count's "
                  "best-k mean reached on it.", ""] + over_games
    games = _games_table(found.runs, window)
    if games:
        lines += ["## Atari over games: mean and median human-normalised (paper Table 1)", "",
                  "Ours: the evaluation of each run's final weights (`evaluation.json`: "
                  "`eval.final_episodes`, or `asyncrl-eval RUN`), no-op starts, averaged over "
                  "a game's runs, normalised with `asyncrl/data/atari_reference.csv`. The "
                  "paper's: Table 1 (57 games, human starts, 80M frames or more), and its "
                  "Table S3 scores normalised the same way on the games run here. Runs of a "
                  "few million frames set beside those compare in kind, not in size.",
                  ""] + games
    human = _human_table(found.runs, k, window)
    if human:
        lines += ["## Atari: human-normalised scores (paper Table S3 beside ours)", "",
                  "Ours: best-k mean final training score, no-op starts; the paper's columns "
                  "are its Table S3 (human starts), so they compare in order of magnitude, not "
                  "digit by digit. Random and human references: `asyncrl/data/"
                  "atari_reference.csv` (sources in its header).", ""] + human + [""]
    torcs = _torcs_table(found.runs, k, window)
    if torcs:
        lines += ["## TORCS: against the scripted driver (paper Figure S-torcs)", "",
                  "Scores are metres along the track per episode. The reference is "
                  "`asyncrl/data/torcs_reference.csv`, measured with `asyncrl-torcs "
                  "reference`; a run that changed the track, car or episode limits has none.",
                  ""] + torcs + [""]
    report = out / "report.md"
    write_text_atomically(report, "\n".join(lines))
    return report


def status_table(found: Found) -> str:
    lines = [f"{'run':60s} {'status':12s} {'frames':>12s} {'score':>9s}  lr"]
    for run in found.runs:
        score = run_final_score(run)
        frames = run.recorded_frames if run.recorded_frames is not None else (
            int(run.frames[-1]) if len(run.frames) else 0)
        lines.append(f"{str(run.path)[-60:]:60s} {run.status:12s} {frames:12,d} "
                     f"{_fmt(score):>9s}  {run.lr:.3g}")
    for path, reason in found.left_out:
        lines.append(f"{str(path)[-60:]:60s} {reason}")
    return "\n".join(lines)


__all__: list[Any] = ["build_report", "find_runs", "status_table"]
