"""Time to a score: when a run's mean of the last N episodes first reached each target."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from asyncrl.commands.report import main as report_main
from asyncrl.config.paths import config_dir
from asyncrl.errors import UserError
from asyncrl.report.time_to_score import (
    curves_figure,
    first_reached,
    rolling_window_means,
    run_time_to_scores,
    seconds_before_the_clock,
    time_to_table,
)
from asyncrl.run_files.recorder import EPISODE_FIELDS
from asyncrl.run_files.run_status import INTERRUPTED, read_status
from asyncrl.tools import bench_learning
from asyncrl.tools.bench_learning import run_to_score
from tests.conftest import cli_env
from tests.run_health import (
    checkpoint_frames,
    interruptible,
    processes,
    session_of,
    session_processes,
    wait_for,
)


def test_window_means_by_hand():
    means = rolling_window_means(np.array([1.0, 3.0, 5.0, 7.0]), 2)
    assert means.tolist() == [2.0, 4.0, 6.0]
    assert rolling_window_means(np.array([1.0]), 2).size == 0  # no full window yet


def test_first_reached_counts_the_episode_that_completes_the_window():
    frames = np.array([100, 200, 300, 400, 500])
    hours = np.array([1, 2, 3, 4, 5]) / 60  # minute i at episode i
    scores = np.array([-3.0, -1.0, 1.0, 3.0, -9.0])
    # windows of 2: -2, 0, 2, -3; 0 is first reached by episodes 2-3, 2 by episodes 3-4
    got = first_reached(frames, hours, scores, [0.0, 2.0, 2.5], window=2, offset_s=30)
    assert [r.frames for r in got] == [300, 400, None]
    assert [r.minutes for r in got] == [pytest.approx(3.5), pytest.approx(4.5), None]


def test_the_seconds_before_wall_time_come_from_the_first_frame_line():
    log = ("first frame 4.5 s after the command (imports and config 1.9 s, model 0.1 s, "
           "run directory 0.1 s, workers' start 2.4 s)\n")
    assert seconds_before_the_clock(log) == pytest.approx(2.0)
    assert seconds_before_the_clock("no such line\n") == 0.0


def _write_run(run_dir, rows, log=""):
    run_dir.mkdir(parents=True)
    lines = ["worker,frames,wall_time,score,length"]
    lines += [f"0,{f},{w},{s},10" for f, w, s in rows]
    (run_dir / "episodes.csv").write_text("\n".join(lines) + "\n")
    (run_dir / "asyncrl.log").write_text(log)


def test_a_run_directory_and_the_report_table(tmp_path, capsys):
    log = "first frame 9.0 s after the command (imports and config 6.0 s, model 0.0 s)\n"
    # rows out of frame order, as two workers write them
    _write_run(tmp_path / "a", [(2000, 120.0, 1.0), (1000, 60.0, -1.0), (3000, 180.0, 5.0)],
               log)
    # sorted: -1, 1, 5; windows of 2: 0 (at 2,000 frames, 120 s + 6 s), 3
    got = run_time_to_scores(tmp_path / "a", [0.0, 3.0, 4.0], window=2)
    assert [r.frames for r in got] == [2000, 3000, None]
    assert [r.minutes for r in got] == [pytest.approx(2.1), pytest.approx(3.1), None]
    table = time_to_table([tmp_path / "a"], [0.0, 4.0], window=2)
    assert "| 0.00M, 2.1 min | not by 0.00M |" in table
    assert report_main([str(tmp_path), "--time-to", "0", "99", "--window", "2"]) == 0
    out = capsys.readouterr().out
    assert "not by 0.00M" in out and str(tmp_path / "a") in out


def test_by_worker_a_row_per_worker_names_its_final_epsilon(tmp_path, capsys):
    run_dir = tmp_path / "nq"
    run_dir.mkdir()
    # worker 0 at epsilon 0.1 scores 0 every episode, worker 1 at 0.01 climbs 2, 4, 6
    rows = [(0, 1000, 0.0), (1, 1100, 2.0), (0, 2000, 0.0), (1, 2100, 4.0), (1, 3100, 6.0)]
    (run_dir / "episodes.csv").write_text(
        "worker,frames,wall_time,score,length\n"
        + "".join(f"{w},{f},{f / 50},{s},10\n" for w, f, s in rows))
    (run_dir / "asyncrl.log").write_text(
        "[worker 0] nstep_q: final epsilon 0.1 (annealed from 1 over 4,000,000 frames)\n"
        "[worker 1] nstep_q: final epsilon 0.01 (annealed from 1 over 4,000,000 frames)\n")
    table = time_to_table([run_dir], [3.0, 5.0], window=2, by_worker=True).splitlines()
    # all episodes in frame order 0, 2, 0, 4, 6: windows of 2 reach 3 and 5 at the last one
    assert table[2] == f"| {run_dir} | 0.00M | 0.00M, 1.0 min | 0.00M, 1.0 min |"
    assert table[3].startswith(f"| {run_dir} worker 0 (final ε 0.1) | 0.00M | not by 0.00M")
    # worker 1's own windows: 3 (at 2,100 frames), 5 (at 3,100)
    assert table[4] == (f"| {run_dir} worker 1 (final ε 0.01) | 0.00M | 0.00M, 0.7 min | "
                        "0.00M, 1.0 min |")
    assert len(table) == 5
    assert report_main([str(run_dir), "--time-to", "3", "--window", "2", "--by-worker"]) == 0
    assert "worker 1 (final ε 0.01)" in capsys.readouterr().out
    assert report_main([str(run_dir), "--by-worker"]) == 2
    assert "--by-worker splits the --time-to table" in capsys.readouterr().err


def _write_run_with_an_epsilon_per_environment(run_dir):
    """Two workers of two environments: draws 0.5 0.01 (worker 0) and 0.01 0.1 (worker 1);
    at 0.01 play worker 0's environment 1 and worker 1's environment 0: 4, 6, 8 in frame
    order; at 0.5 worker 0's environment 0: -20, -20; at 0.1 worker 1's environment 1: 1."""
    run_dir.mkdir()
    rows = [(0, 0, 1000, -20.0), (0, 1, 1100, 4.0), (1, 0, 1200, 6.0), (1, 1, 1300, 1.0),
            (0, 0, 2000, -20.0), (1, 0, 2100, 8.0)]
    (run_dir / "episodes.csv").write_text(
        "worker,frames,wall_time,score,episode_frames,environment\n"
        + "".join(f"{w},{f},{f / 50},{s},10,{e}\n" for w, e, f, s in rows))
    (run_dir / "asyncrl.log").write_text(
        "[worker 0] nstep_q: final epsilons per environment 0.5 0.01 (annealed from 1 ...)\n"
        "[worker 1] nstep_q: final epsilons per environment 0.01 0.1 (annealed from 1 ...)\n")


def test_by_epsilon_a_row_per_final_epsilon_from_each_environments_draw(tmp_path, capsys):
    run_dir = tmp_path / "nq_pe"
    _write_run_with_an_epsilon_per_environment(run_dir)
    table = time_to_table([run_dir], [5.0, 7.0], window=2, by_epsilon=True).splitlines()
    # all six in frame order -20, 4, 6, 1, -20, 8: windows of 2 are -8, 5, 3.5, -9.5, -6
    assert table[2] == f"| {run_dir} | 0.00M | 0.00M, 0.4 min | not by 0.00M |"
    # at 0.01: windows 5 (at 1,200 frames, 24 s), 7 (at 2,100, 42 s)
    assert table[3] == (f"| {run_dir} final ε 0.01 (2 environments) | 0.00M | 0.00M, 0.4 min"
                        " | 0.00M, 0.7 min |")
    assert table[4].startswith(f"| {run_dir} final ε 0.1 (1 environment) | 0.00M | not by")
    assert table[5].startswith(f"| {run_dir} final ε 0.5 (1 environment) | 0.00M | not by")
    assert len(table) == 6
    assert report_main([str(run_dir), "--time-to", "5", "--window", "2", "--by-epsilon"]) == 0
    assert "final ε 0.01 (2 environments)" in capsys.readouterr().out
    assert report_main([str(run_dir), "--by-epsilon"]) == 2
    assert "--by-epsilon splits the --time-to table and the --curves lines" in (
        capsys.readouterr().err)


def test_by_epsilon_groups_the_workers_of_one_draw_and_says_when_it_cannot(tmp_path):
    run_dir = tmp_path / "nq"
    run_dir.mkdir()
    # workers 0 and 2 drew 0.1, worker 1 drew 0.01; the file has no environment column
    rows = [(0, 1000, 1.0), (1, 1100, 9.0), (2, 1200, 3.0), (1, 1300, 9.0)]
    (run_dir / "episodes.csv").write_text(
        "worker,frames,wall_time,score,episode_frames\n"
        + "".join(f"{w},{f},{f / 50},{s},10\n" for w, f, s in rows))
    (run_dir / "asyncrl.log").write_text("".join(
        f"[worker {w}] nstep_q: final epsilon {e} (annealed from 1 ...)\n"
        for w, e in ((0, "0.1"), (1, "0.01"), (2, "0.1"))))
    table = time_to_table([run_dir], [2.0], window=2, by_epsilon=True).splitlines()
    assert table[3] == f"| {run_dir} final ε 0.01 (1 worker) | 0.00M | 0.00M, 0.4 min |"
    # 0.1: 1 then 3, a window of 2 at 2 with the episode at 1,200 frames (24 s)
    assert table[4] == f"| {run_dir} final ε 0.1 (2 workers) | 0.00M | 0.00M, 0.4 min |"
    # a draw per environment, but a file that does not say which environment played
    (run_dir / "asyncrl.log").write_text(
        "[worker 0] nstep_q: final epsilons per environment 0.5 0.01 (annealed from 1 ...)\n")
    table = time_to_table([run_dir], [2.0], window=2, by_epsilon=True).splitlines()
    assert table[3] == (f"| {run_dir}: no row per final ε (its episodes.csv does not say "
                        "which environment played) | | |")
    assert len(table) == 4
    # draws made again at each episode (algo.epsilon_redraw): the log's first draws say
    # nothing of the later episodes, per environment or per worker
    for line in ("final epsilons per environment 0.5 0.01, drawn again as each episode begins",
                 "final epsilon 0.1, drawn again as each episode begins"):
        (run_dir / "asyncrl.log").write_text(f"[worker 0] nstep_q: {line} (annealed ...)\n")
        table = time_to_table([run_dir], [2.0], window=2, by_epsilon=True,
                              by_worker=True).splitlines()
        assert table[3].startswith(f"| {run_dir} worker 0 | ")  # no final ε named
        assert table[-1] == (f"| {run_dir}: no row per final ε (each environment drew its "
                             "final ε again at each episode) | | |")


def test_by_epsilon_reads_a_serial_runs_log_and_counts_what_it_cannot_place(tmp_path):
    run_dir = tmp_path / "serial"
    run_dir.mkdir()
    # worker 1 has no draw in the log; worker 0's second row has no environment
    (run_dir / "episodes.csv").write_text(
        "worker,frames,wall_time,score,episode_frames,environment\n"
        "0,1000,20,4.0,10,1\n1,1100,22,9.0,10,0\n0,1200,24,6.0,10,\n0,1300,26,8.0,10,1\n")
    # a serial run logs its one worker's draws from the launcher's process, without a tag
    (run_dir / "asyncrl.log").write_text(
        "[asyncrl.learning.worker][INFO] - nstep_q: final epsilons per environment 0.5 0.01"
        " (annealed from 1 ...)\n")
    table = time_to_table([run_dir], [5.0], window=2, by_epsilon=True).splitlines()
    # the run's row keeps all four (the row without an environment too): 4, 9 reach 5
    assert table[2] == f"| {run_dir} | 0.00M | 0.00M, 0.4 min |"
    # at 0.01 worker 0's environment 1: 4 then 8, a window of 6 at 1,300 frames (26 s)
    assert table[3] == f"| {run_dir} final ε 0.01 (1 environment) | 0.00M | 0.00M, 0.4 min |"
    assert table[4] == f"| {run_dir}: 2 episodes at no known final ε left out | | |"
    assert len(table) == 5


def test_the_bench_stops_a_real_run_once_it_reached_the_score(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_learning, "POLL_S", 0.5)
    # CartPole's random play scores ~20: a target of 10 is met by the 20th episode
    row = run_to_score("workers=1", [5.0, 10.0], 200_000, tmp_path,
                       ["env=classic/cartpole", "eval.episodes=0", "log.tensorboard=false"])
    assert row.reached[1].frames is not None and row.reached[1].minutes > 0
    assert row.frames < 200_000  # stopped by SIGINT, not by the cap
    assert (row.run_dir / "checkpoints" / "last.pt").is_file()


# the bench on CartPole, a game it otherwise refuses, so that a run starts in seconds; a
# stop timeout below the test's own, so the bench's error would show rather than the test's
BENCH_ON_CARTPOLE = """
import sys
from asyncrl.tools import bench, bench_learning
bench_learning.POLL_S = 0.2
bench_learning.STOP_TIMEOUT_S = 60
bench.learning_game = lambda overrides: "cartpole"
bench.main(sys.argv[1:])
"""


def _bench_run(bench_pid: int) -> int | None:
    """The run the bench started: its child running ``python -m asyncrl``."""
    return next((pid for pid, f, cmd in processes()
                 if int(f[1]) == bench_pid and b"asyncrl\0env=" in cmd), None)


@pytest.mark.parametrize(("signum", "code", "said"), [
    (signal.SIGINT, 130, "stopped by SIGINT"),  # a terminal's Ctrl-C, to the bench's group
    (signal.SIGTERM, 143, "stopped by SIGTERM"),  # `kill` or `timeout`, to the bench alone
])
def test_a_stopped_bench_stops_its_run_with_a_checkpoint_and_writes_the_rows_so_far(
        tmp_path, signum, code, said):
    out, runs = tmp_path / "bench.md", tmp_path / "runs"
    args = ["env=classic/cartpole", "eval.episodes=0", "log.tensorboard=false",
            "--sections", "learning", "--no-learning-peer", "--learning-settings", "workers=1",
            "workers=2", "--learning-targets", "1000", "--learning-frames", "10_000_000",
            "--output", str(out), "--learning-out", str(runs)]
    bench = subprocess.Popen([sys.executable, "-c", BENCH_ON_CARTPOLE, *args], env=cli_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, preexec_fn=interruptible)
    run_pid = None
    try:
        assert wait_for(lambda: len(_episodes(runs)) > 2, 120), "the run played no episodes"
        run_pid = _bench_run(bench.pid)
        assert run_pid is not None and session_of(run_pid) == run_pid  # a session of its own
        run_dir = next(runs.glob("*/workers_1"))
        os.killpg(bench.pid, signum)
        stdout, stderr = bench.communicate(timeout=120)
    finally:
        for session in (bench.pid, run_pid):
            if session is not None and session_processes(session):
                os.killpg(session, signal.SIGKILL)
    assert bench.returncode == code, stderr
    assert stderr.strip().splitlines() == [stderr.strip()] and said in stderr, stderr
    assert "workers=1: interrupted at T=" in stdout
    assert read_status(run_dir)["status"] == INTERRUPTED  # the run's own ending
    assert checkpoint_frames(run_dir) > 0  # written at the stop, not the T = 0 save
    assert wait_for(lambda: not session_processes(run_pid), 10), "the run's workers outlived it"
    assert not list(runs.glob("*/workers_2"))  # the settings after it are not started
    rows = [line for line in out.read_text().splitlines() if line.startswith("| `")]
    assert len(rows) == 1 and "`workers=1`" in rows[0] and "(interrupted)" in rows[0]


def _episodes(runs: Path) -> list[str]:
    found = list(runs.glob("*/workers_1/episodes.csv"))
    return found[0].read_text().splitlines() if found else []


def test_the_bench_says_when_a_run_failed_rather_than_report_it_unreached(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(bench_learning, "POLL_S", 0.5)
    with pytest.raises(RuntimeError, match="the run failed .exit 2.*workers=0"):
        run_to_score("workers=0", [10.0], 200_000, tmp_path, ["env=classic/cartpole"])


def test_the_curves_figure_draws_each_runs_own_mean_against_frames_and_minutes(
        tmp_path, monkeypatch, capsys):
    import asyncrl.report.figures as figures

    log = "first frame 9.0 s after the command (imports and config 6.0 s, model 0.0 s)\n"
    _write_run(tmp_path / "x" / "seed_1", [(1000, 60.0, -1.0), (2000, 120.0, 1.0),
                                          (3000, 180.0, 5.0)], log)
    _write_run(tmp_path / "y" / "seed_1", [(1000, 30.0, 2.0), (2000, 90.0, 4.0)])
    drawn = {}
    real = figures.run_curves
    monkeypatch.setattr(figures, "run_curves",
                        lambda runs, path, window, marks: drawn.update(
                            runs=runs, marks=marks) or real(runs, path, window, marks))
    png = tmp_path / "out" / "curves.png"
    assert report_main([str(tmp_path / "x"), str(tmp_path / "y"), "--curves", str(png),
                        "--window", "2", "--time-to", "3"]) == 0
    assert png.stat().st_size > 0 and "+3" in capsys.readouterr().out
    (x_label, x_frames, x_minutes, x_means), (y_label, *_, y_means) = drawn["runs"]
    # two runs named seed_1: each is labelled by its path
    assert (x_label, y_label) == (str(tmp_path / "x" / "seed_1"), str(tmp_path / "y" / "seed_1"))
    assert list(x_frames) == [2000, 3000] and list(x_means) == [0.0, 3.0]
    assert list(x_minutes) == [pytest.approx(2.1), pytest.approx(3.1)]  # + 6 s before T
    assert list(y_means) == [3.0] and list(drawn["marks"]) == [3.0]


def test_by_epsilon_the_curves_figure_draws_a_line_per_final_epsilon(tmp_path, monkeypatch):
    import asyncrl.report.figures as figures

    _write_run_with_an_epsilon_per_environment(tmp_path / "nq_pe")
    _write_run(tmp_path / "plain", [(1000, 60.0, 1.0), (2000, 120.0, 3.0)])
    drawn = {}
    monkeypatch.setattr(figures, "run_curves",
                        lambda runs, path, window, marks: drawn.update(runs=runs))
    curves_figure([tmp_path / "nq_pe", tmp_path / "plain"], tmp_path / "c.png", window=2,
                  by_epsilon=True)
    # 0.01's three episodes (4, 6, 8) and 0.5's two (-20, -20) fill a window of 2; 0.1's
    # one does not; the run with no draw in its log draws no line
    lines = drawn["runs"]
    assert [line[0] for line in lines] == ["nq_pe ε 0.01", "nq_pe ε 0.5"]
    assert [list(line[3]) for line in lines] == [[5.0, 7.0], [-20.0]]
    # the run's colour; a style for each ε of all the runs (0.01, 0.1, 0.5): 0.1 drew no line
    assert [line[4:] for line in lines] == [(0, 0), (0, 2)]


def test_the_curves_figure_refuses_what_it_cannot_draw_in_one_line(tmp_path, capsys):
    _write_run(tmp_path / "a", [(1000, 60.0, -1.0)])
    assert report_main([str(tmp_path), "--curves", str(tmp_path / "c.txt")]) == 2
    assert "--curves" in capsys.readouterr().err
    # one episode, a window of 20: nothing to draw, said as such
    assert report_main([str(tmp_path), "--curves", str(tmp_path / "c.png")]) == 2
    captured = capsys.readouterr()
    assert "no run has 20 episodes yet" in captured.err and "left out" in captured.out
    assert not (tmp_path / "c.png").exists()


def test_the_learning_section_times_the_atari_game_the_overrides_compose():
    assert bench_learning.learning_game([]) == "pong"
    assert bench_learning.learning_game(["seed=2", "env=atari/breakout"]) == "breakout"
    assert bench_learning.learning_game(["env=atari/qbert", "env=atari/beam_rider"]) == "beam_rider"
    # the any-game config names its game by a key, not by the env's name
    assert bench_learning.learning_game(["env=atari/any", "env.game=galaxian"]) == "galaxian"
    with pytest.raises(UserError, match="env=classic/cartpole: the learning section times Atari"):
        bench_learning.learning_game(["env=classic/cartpole"])
    with pytest.raises(UserError, match="unknown env option 'atari'"):
        bench_learning.learning_game(["env=atari"])


def test_the_peer_plays_every_shipped_game_ale_py_registers_under_its_own_id():
    import ale_py
    import gymnasium as gym
    import yaml

    gym.register_envs(ale_py)
    assert bench_learning.sb3_env_id("pong") == bench_learning.SB3_GAME
    assert bench_learning.sb3_env_id("space_invaders") == "SpaceInvadersNoFrameskip-v4"
    games = [yaml.safe_load(path.read_text())["game"]
             for path in sorted((config_dir() / "env" / "atari").glob("[!_]*.yaml"))
             if path.stem != "any"]
    assert len(games) >= 57
    unplayable = [g for g in games if bench_learning.sb3_env_id(g) not in gym.registry]
    assert unplayable == ["surround"]  # ale-py registers no v4 id for it
    with pytest.raises(UserError, match="surround: SB3 A2C has no SurroundNoFrameskip-v4"):
        bench_learning.check_sb3_game("surround")
    bench_learning.check_sb3_game("breakout")


def test_the_peers_episodes_read_back_as_a_runs_do(tmp_path, capsys):
    assert list(bench_learning.EpisodeLog.COLUMNS) == EPISODE_FIELDS
    log = bench_learning.EpisodeLog(tmp_path / "sb3_a2c" / "episodes.csv")
    for environment, (frames, seconds, score) in enumerate(
            [(1_000_000, 60.0, 1.0), (2_000_000, 120.0, 3.0), (3_000_000, 180.0, 5.0)]):
        log.add(frames, seconds, score, episode_frames=1_000, environment=environment)
    log.close()
    # the peer's 16 environments are one worker's: each row names the one that played
    with (tmp_path / "sb3_a2c" / "episodes.csv").open() as handle:
        assert [r["environment"] for r in csv.DictReader(handle)] == ["0", "1", "2"]
    reached = run_time_to_scores(tmp_path / "sb3_a2c", [2.0, 4.0, 9.0], window=2)
    assert [(r.frames, r.minutes) for r in reached] == [(2_000_000, 2.0), (3_000_000, 3.0),
                                                        (None, None)]
    # asyncrl-report finds the peer by its episodes.csv, with no config.yaml beside it
    assert report_main([str(tmp_path), "--time-to", "2", "4", "--window", "2"]) == 0
    assert "| 3.00M | 2.00M, 2.0 min | 3.00M, 3.0 min |" in capsys.readouterr().out


def test_a_wrong_env_for_the_learning_section_is_one_line_before_any_run(capsys):
    from asyncrl.tools.bench import main as bench_main
    with pytest.raises(SystemExit) as exit_info:
        bench_main(["--sections", "learning", "--output", "/nonexistent/never.md",
                    "env=classic/cartpole"])
    assert exit_info.value.code == 2
    assert "env=classic/cartpole: the learning section times Atari games" in (
        capsys.readouterr().err)
