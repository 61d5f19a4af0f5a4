"""asyncrl-report on run directories with known answers, and the whole pipeline end to end."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from asyncrl.commands.report import main
from asyncrl.report import build_report
from asyncrl.report.metrics import (
    best_k,
    curve_on_grid,
    human_normalised,
    speedups,
    time_to_reach,
)
from asyncrl.report.runs import find_runs
from asyncrl.run_files.run_status import write_status
from tests.conftest import QUICK, run_cli


def make_run(path: Path, *, lr: float, seed: int, scores: list[float], hours_per_episode=0.1,
             frames_per_episode=1000, workers=2, optimizer="shared_rmsprop", game="pong",
             status="finished", reason="", env=None) -> Path:
    path.mkdir(parents=True)
    config = {"lr": lr, "seed": seed, "workers": workers, "total_frames": 10**6,
              "algo": {"name": "a3c"}, "network": {"name": "ff"},
              "optimizer": {"name": optimizer},
              "env": env or {"family": "atari", "game": game}}
    (path / "config.yaml").write_text(yaml.safe_dump(config))
    with (path / "episodes.csv").open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["worker", "frames", "wall_time", "score", "episode_frames"])
        for i, score in enumerate(scores, start=1):
            out.writerow([0, i * frames_per_episode, i * hours_per_episode * 3600, score, 100])
    write_status(path, status, reason=reason)
    return path


def test_curve_on_grid_is_the_running_mean_of_the_last_episodes():
    x = np.array([10, 20, 30, 40])
    scores = np.array([1.0, 3.0, 5.0, 7.0])
    curve = curve_on_grid(x, scores, np.array([5, 10, 25, 40, 100]), window=2)
    assert np.isnan(curve[0])
    assert curve[1:].tolist() == [1.0, 2.0, 6.0, 6.0]  # (1), (1+3)/2, (5+7)/2, (5+7)/2


def test_time_to_reach_and_speedups():
    grid = np.array([0.0, 1.0, 2.0, 3.0])
    assert time_to_reach(grid, np.array([0, 1, 5, 9.0]), 5.0) == 2.0
    assert time_to_reach(grid, np.array([0, 1, 2, 3.0]), 5.0) is None
    assert speedups({1: 4.0, 2: 2.0, 4: 1.25, 8: None}) == {1: 1.0, 2: 2.0, 4: 3.2, 8: None}


def test_human_normalised_on_published_pong_numbers():
    # Pong: random -20.7, human 14.6 (atari_reference.csv)
    assert human_normalised(14.6, -20.7, 14.6) == pytest.approx(100.0)
    assert human_normalised(-20.7, -20.7, 14.6) == pytest.approx(0.0)
    assert human_normalised(0.0, -20.7, 14.6) == pytest.approx(58.640, abs=1e-3)


def test_best_k_picks_the_highest_final_scores_and_skips_failed_runs(tmp_path):
    for i, last in enumerate([5, 9, 1, 7]):
        make_run(tmp_path / f"r{i}", lr=10 ** -(i + 2), seed=i, scores=[0] * 20 + [last] * 20)
    make_run(tmp_path / "bad", lr=0.5, seed=9, scores=[100] * 40, status="diverged",
             reason="loss nan")
    runs = find_runs([tmp_path]).runs
    chosen = best_k(runs, 2)
    assert [r.path.name for r in chosen] == ["r1", "r3"]


def test_report_on_a_sweep_with_known_answers(tmp_path):
    sweep = tmp_path / "sweep"
    for i, last in enumerate([5, 9, 1, 7]):
        make_run(sweep / f"r{i}", lr=10 ** -(i + 2), seed=i, scores=[0] * 20 + [last] * 20)
    make_run(sweep / "bad", lr=0.5, seed=9, scores=[3.0], status="diverged",
             reason="worker 0: loss nan at T=5")
    report = build_report([sweep], tmp_path / "out", k=2)
    text = report.read_text()
    # 5 runs, 4 finished, 1 diverged; best 9 at lr 1e-3; best-2 mean (9 + 7) / 2 = 8
    assert "| atari/pong, a3c, ff, shared_rmsprop, 2 workers | 5 | 4 | 1 | 9.0 (0.001) | 8.0 |" \
        in text
    assert "diverged, worker 0: loss nan at T=5" in text
    for picture in ("curves_frames.png", "curves_hours.png", "score_vs_lr.png",
                    "score_by_rank.png"):
        assert (tmp_path / "out" / picture).stat().st_size > 1000
    # Pong's row: best-2 mean 8.0 -> 100 (8 + 20.7) / 35.3; the paper's A3C FF column 11.4
    row = next(line for line in text.splitlines() if line.startswith("| pong |"))
    assert "| 8.0 | 81.3 |" in row and "| 11.4 |" in row


def test_torcs_runs_are_a_percentage_of_the_scripted_driver_where_comparable(tmp_path):
    same = {"family": "torcs", "setting": "slow_car", "track": "g-track-1", "car": "p406",
            "max_episode_seconds": 90.0, "laps": 3}
    make_run(tmp_path / "a", lr=1e-3, seed=1, scores=[1414.75] * 20, env=same)
    make_run(tmp_path / "b", lr=1e-3, seed=1, scores=[1000.0] * 20,
             env={**same, "setting": "fast_car", "car": "car1-trb1", "max_episode_seconds": 60})
    text = build_report([tmp_path], tmp_path / "out", k=1).read_text()
    rows = [line for line in text.splitlines() if line.startswith("| slow_car |")
            or line.startswith("| fast_car |")]
    # slow_car's reference is 2,829.5 m: 1,414.75 is 50 %; fast_car raced 60 s, not 90
    assert rows[0].startswith("| fast_car |") and rows[0].endswith("| 1,000.0 | – | – |")
    assert rows[1].endswith("| 1,414.8 | 2,829.5 | 50.0 |")


def test_speedup_from_runs_that_differ_only_in_workers(tmp_path):
    ramp = [float(i) for i in range(40)]
    for seed in range(2):
        make_run(tmp_path / f"w1_{seed}", lr=1e-3, seed=seed, scores=ramp, workers=1,
                 hours_per_episode=0.2)
        make_run(tmp_path / f"w4_{seed}", lr=1e-3, seed=seed + 10, scores=ramp, workers=4,
                 hours_per_episode=0.05)
    text = build_report([tmp_path], tmp_path / "out", k=2, reference=20.0).read_text()
    lines = text.splitlines()
    one = next(line for line in lines if line.startswith("| 1 |"))
    four = next(line for line in lines if line.startswith("| 4 |"))
    assert one.endswith("| 1.00 |")
    assert float(four.split("|")[3]) == pytest.approx(4.0, rel=0.1)  # 4x the episodes per hour


def test_runs_in_progress_are_left_out_with_the_reason(tmp_path):
    make_run(tmp_path / "done", lr=1e-3, seed=1, scores=[1.0, 2.0])
    live = make_run(tmp_path / "live", lr=1e-3, seed=2, scores=[1.0])
    write_status(live, "running")  # this test's own pid: alive
    found = find_runs([tmp_path])
    assert [r.path.name for r in found.runs] == ["done"]
    assert found.left_out == [(live, "still in progress")]
    text = build_report([tmp_path], tmp_path / "out").read_text()
    assert "still in progress" in text and str(os.getpid()) not in text


def test_different_games_never_share_a_curve(tmp_path):
    make_run(tmp_path / "pong", lr=1e-3, seed=1, scores=[1.0] * 5, game="pong")
    make_run(tmp_path / "breakout", lr=1e-3, seed=2, scores=[2.0] * 5, game="breakout")
    text = build_report([tmp_path], tmp_path / "out").read_text()
    assert "| atari/pong, a3c" in text and "| atari/breakout, a3c" in text


def test_a_directory_without_runs_is_one_line(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no finished or stopped runs" in err[0]
    assert not (tmp_path / "report").exists()


def test_sweep_then_report_through_the_real_commands(tmp_path):
    sweep_dir = tmp_path / "sweep"
    result = run_cli(["-m", "+sweep=lr_loguniform", "hydra.sweeper.trials=3",
                      "env=classic/cartpole", "total_frames=2000", "workers=2",
                      "log.tensorboard=false", *QUICK, f"hydra.sweep.dir={sweep_dir}"],
                     tmp_path, timeout=400)
    assert result.returncode == 0, result.stderr[-3000:]
    report = run_cli([str(sweep_dir)], tmp_path, timeout=120, module="asyncrl.commands.report")
    assert report.returncode == 0, report.stderr
    text = (sweep_dir / "report" / "report.md").read_text()
    assert "| gym/CartPole-v1, a3c, ff, shared_rmsprop, 2 workers | 3 | 3 | 0 |" in text
    status = run_cli([str(sweep_dir), "--status"], tmp_path, timeout=120,
                     module="asyncrl.commands.report")
    assert status.stdout.count("finished") == 3


def test_a_partly_written_last_line_leaves_the_run_in_without_that_episode(tmp_path):
    make_run(tmp_path / "run", lr=1e-3, seed=1, scores=[1.0, 2.0, 3.0])
    with (tmp_path / "run" / "episodes.csv").open("a") as handle:
        handle.write("0,99")  # killed while writing: no score, no newline
    found = find_runs([tmp_path])
    assert not found.left_out
    assert list(found.runs[0].scores) == [1.0, 2.0, 3.0]


def test_the_status_table_takes_frames_from_status_json(tmp_path):
    from asyncrl.report import status_table

    run = make_run(tmp_path / "run", lr=1e-3, seed=1, scores=[1.0, 2.0])  # last episode: T=2000
    write_status(run, "interrupted", frames=5432)  # the checkpoint's T, past that episode
    assert " 5,432 " in status_table(find_runs([tmp_path]))


def test_an_optuna_study_directory_reads_in_trial_order_with_the_studys_choice(tmp_path):
    study = tmp_path / "study"  # what hydra/sweeper=optuna leaves: numbered trials, a result
    for trial, (lr, last) in enumerate([(1e-3, 5), (2e-3, 9), (3e-4, 1)] * 4):
        make_run(study / str(trial), lr=lr, seed=1, scores=[last] * 20)
    (study / "optimization_results.yaml").write_text(
        "name: optuna\nbest_params:\n  lr: 0.002\nbest_value: 9.0\n")
    runs = find_runs([study]).runs
    assert [run.path.name for run in runs] == [str(n) for n in range(12)]
    text = build_report([study], tmp_path / "out", k=2).read_text()
    assert "| 12 | 12 | 0 | 9.0 (0.002) |" in text
    assert f"- `{study}` (optuna): best objective 9 with lr=0.002" in text


def _with(path: Path, group: str, **keys) -> None:
    """Set keys of a made run's config, as that option on the command line would."""
    config = yaml.safe_load((path / "config.yaml").read_text())
    config[group].update(keys)
    (path / "config.yaml").write_text(yaml.safe_dump(config))


@pytest.mark.parametrize(("algo", "group", "key", "off", "value"), [
    ("a3c", "algo", "gae_lambda", 1.0, 0.95),
    ("nstep_q", "algo", "lambda_return", 1.0, 0.8),
    ("nstep_q", "algo", "double_q", False, True),
    ("nstep_q", "algo", "replay_capacity", 0, 100),
    ("nstep_q", "network", "dueling", False, True),
    ("a3c", "network", "spatial_softmax", False, True),
    ("a3c", "network", "conv", "paper", "nature"),
])
def test_runs_differing_only_in_an_option_land_in_different_groups(tmp_path, algo, group,
                                                                   key, off, value):
    from asyncrl.report.grouping import group_runs

    # one run saved before the option existed, one with it off, one with it on; each with
    # its own lr and seed, which never split a group
    for name, seed in (("older", 1), ("off", 2), ("on", 3)):
        make_run(tmp_path / name, lr=10.0 ** -seed, seed=seed, scores=[1.0] * 3)
        _with(tmp_path / name, "algo", name=algo)
    _with(tmp_path / "off", group, **{key: off})
    _with(tmp_path / "on", group, **{key: value})
    groups = group_runs(find_runs([tmp_path]).runs)
    members = {label: sorted(r.path.name for r in runs) for label, runs in groups.items()}
    assert sorted(members.values()) == [["off", "older"], ["on"]], members
    on_label = next(label for label, names in members.items() if names == ["on"])
    assert on_label.endswith(f", {group}.{key}={value}")


def _evaluated(path: Path, mean: float) -> None:
    import json

    (path / "evaluation.json").write_text(json.dumps({"frames": 10**6, "scores": [mean],
                                                      "mean": mean}))


def test_table_1_over_games_from_the_final_weights_evaluations(tmp_path):
    # pong: random -20.7, human 14.6; breakout: random 1.7, human 30.5 (atari_reference.csv)
    for seed, score in ((1, 7.0), (2, 10.6)):
        _evaluated(make_run(tmp_path / f"pong_{seed}", lr=3e-3, seed=seed, scores=[0.0] * 20),
                   score)
    _evaluated(make_run(tmp_path / "breakout", lr=3e-3, seed=1, scores=[5.0] * 20,
                        game="breakout"), 30.5)
    make_run(tmp_path / "qbert", lr=3e-3, seed=1, scores=[300.0] * 20, game="qbert")
    text = build_report([tmp_path], tmp_path / "out", k=1).read_text()
    table = text.split("## Atari over games", 1)[1].split("\n## ", 1)[0]
    # pong: mean evaluation 8.8 -> 100 (8.8 + 20.7) / 35.3 = 83.6 %; breakout 100 %
    assert "2 games evaluated of the paper's 57." in table
    assert "| asyncrl (this report) | 2 | 91.8 % | 91.8 % |" in table
    assert "| paper: A3C FF, 1 day on CPU, Table 1 | 57 | 344.1 % | 68.2 % |" in table
    # the paper's Table S3 on the same two games, normalised the same way: A3C FF 1 day
    # pong 11.4 -> 90.9 %, breakout 551.6 -> 1,909.4 %: mean 1,000.2 %
    assert "| paper: A3C FF, 1 day on CPU, these games | 2 | 1,000.2 % |" in table
    assert "| pong | 2 | 8.8 | 2 | 0.0 | -20.7 | 14.6 | 83.6 % |" in table  # 1 episode each
    assert "| qbert | 1 | – | 0 | 300.0 |" in table  # run, not evaluated: in no mean
    assert "Not run yet (54):" in table and "seaquest" in table


def test_speedups_averaged_over_games_each_to_its_own_reference(tmp_path):
    for game, top in (("pong", 40), ("breakout", 80)):
        ramp = [float(i) * top / 40 for i in range(40)]
        make_run(tmp_path / f"{game}_1", lr=1e-3, seed=1, scores=ramp, workers=1, game=game,
                 hours_per_episode=0.2)
        make_run(tmp_path / f"{game}_4", lr=1e-3, seed=2, scores=ramp, workers=4, game=game,
                 hours_per_episode=0.1 if game == "pong" else 0.05)
    text = build_report([tmp_path], tmp_path / "out", k=1).read_text()
    table = text.split("## Speed-ups averaged over games", 1)[1].split("\n## ", 1)[0]
    assert "averaged over 2 games (atari/breakout, atari/pong)" in table
    row = next(line for line in table.splitlines() if line.startswith("| mean speed-up |"))
    one, four = (float(cell) for cell in row.strip("| ").split(" | ")[1:])
    assert one == 1.0 and four == pytest.approx(3.0, rel=0.1)  # (2 + 4) / 2
    assert (tmp_path / "out" / "scaling_hours_0.png").stat().st_size > 1000  # Figure 4
