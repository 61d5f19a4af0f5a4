"""The real CLI in a subprocess, with real worker processes, as a user runs it."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from asyncrl.config.compose import RENAMED_PRESETS
from asyncrl.learning.process_name import EVALUATOR_NAME, WORKER_PREFIX
from asyncrl.run_files.startup import first_frame_phases
from tests.conftest import CONF, QUICK, REPO, cli_env, compose, run_cli
from tests.run_health import (
    checkpoint_frames,
    interruptible,
    named_children,
    processes,
    session_processes,
    wait_for,
)

# Pong with a short episode cap, so that a few thousand frames finish several episodes
SHORT_PONG = ["env=atari/pong", "env.max_episode_frames=1200", "workers=2", *QUICK]


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_two_workers_write_everything_a_run_leaves(workdir):
    run_dir = workdir / "run"
    # one environment a worker, so that each plays whole episodes in 8,000 frames
    result = run_cli([*SHORT_PONG, "total_frames=8000", "eval.episodes=1", "envs_per_worker=1",
                      "eval.interval_frames=4000", f"hydra.run.dir={run_dir}"], workdir)
    assert result.returncode == 0, result.stderr
    for name in ("config.yaml", "episodes.csv", "updates.csv", "eval.csv",
                 "learning_curve.png", "checkpoints/last.pt", "asyncrl.log"):
        assert (run_dir / name).is_file(), name
    assert list((run_dir / "tb").glob("events.out.tfevents.*"))
    episodes = read_rows(run_dir / "episodes.csv")
    assert {"worker", "frames", "wall_time", "score"} <= set(episodes[0])
    assert {r["worker"] for r in episodes} == {"0", "1"}  # both processes played
    assert all(-21 <= float(r["score"]) <= 21 for r in episodes)  # raw Pong scores
    updates = read_rows(run_dir / "updates.csv")
    assert updates and {"loss", "entropy", "grad_norm", "lr"} <= set(updates[0])
    assert float(updates[-1]["lr"]) < float(updates[0]["lr"])  # annealed
    assert read_rows(run_dir / "eval.csv")
    assert checkpoint_frames(run_dir) >= 8000
    assert "workers: 2" in (run_dir / "config.yaml").read_text()
    # the launcher says how long the first frame took, phase by phase, and the phases add up
    startup = first_frame_phases((run_dir / "asyncrl.log").read_text())
    assert startup is not None and 0 < startup["total"] < 120
    assert abs(sum(v for k, v in startup.items() if k != "total") - startup["total"]) < 0.3


@pytest.mark.parametrize(("args", "fragment"), [
    (["-m", "workers=0"], "workers=0"),
    (["-m", "seed=-1"], "seed=-1"),
    (["-m", "envs_per_worker=2,0"], "envs_per_worker=0"),
    (["-m", "lrr=1"], "Key 'lrr' not in 'TrainConfig'"),
    (["-m", "lr=1e-3,inf"], "lr=inf"),
    (["--multirun", "optimizer=rmsprop,shared_rmsprop", "optimizer.alpha=1"],
     "optimizer.alpha=1"),
    (["-m", "+sweep=lr_loguniform", "eval.interval_frames=0"], "eval.interval_frames=0"),
    (["-m", "algo=nstep_q", "algo.double_q=false,2"], "algo.double_q=2: must be true or false"),
])
def test_a_multirun_checks_every_value_before_any_run(workdir, args, fragment):
    result = run_cli([*args, f"hydra.sweep.dir={workdir / 'multirun'}"], workdir, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not (workdir / "multirun").exists() and not (workdir / "outputs").exists()


@pytest.mark.parametrize(("args", "fragment"), [
    (["env=atari/not_a_game"], "unknown env option 'atari/not_a_game'"),
    (["env=atari/any", "env.game=not_a_rom"], "unknown Atari game 'not_a_rom'"),
    (["algo=nope"], "unknown algo option 'nope'"),
    (["algo.entropy_bta=0.1"], "Key 'entropy_bta' not in 'A3CConfig'"),
    (["workers=0"], "workers=0"),
    (["envs_per_worker=257"], "envs_per_worker=257: must lie in [1, 256]"),
    (["envs_per_worker=2", "minibatches=3"], "minibatches=3: must lie in [1, envs_per_worker=2]"),
    (["total_frames=-1"], "total_frames=-1"),
    (["workers=two"], "could not be converted to Integer"),
    (["resume=does/not/exist"], "no such run directory"),
    (["algo=nstep_q", "env=classic/cartpole", "env.id=Pendulum-v1"],
     "Pendulum-v1 has continuous actions"),
    (["algo=one_step_q", "algo.epsilon_probabilities=[0.5,0.6,0.1]"], "must be non-negative"),
    (["algo=nstep_q", "algo.t_max=0"], "algo.t_max=0"),
    (["env=mujoco/not_a_task"], "unknown env option 'mujoco/not_a_task'"),
    (["env=mujoco/hopper", "algo=nstep_q"],
     "Hopper-v5 has continuous actions, but algo=nstep_q picks the best of finitely many; "
     "use algo=a3c (a Gaussian policy)"),
    (["algo=nstep_q", "network=gaussian"],
     "does not give; use network=ff or network=lstm"),
    (["env=mujoco/hopper", "network=ff"], "Hopper-v5 has continuous actions"),
    (["network=gaussian"], "network=gaussian draws continuous actions, but pong"),
    (["algo.episode_updates=true"], "needs a time limit of at most 10,000 steps"),
    (["env.max_episode_frames=0"], "env.max_episode_frames=0: must be at least env.frame_skip"),
    # OmegaConf alone would read any number but 0 as true
    (["algo=nstep_q", "algo.double_q=3"], "algo.double_q=3: must be true or false"),
])
def test_bad_input_is_one_line_with_nonzero_exit_and_nothing_written(workdir, args, fragment):
    result = run_cli(args, workdir, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("asyncrl: error:") and fragment in lines[0]
    assert "Traceback" not in result.stdout + result.stderr
    assert not (workdir / "outputs").exists()


def test_each_run_of_a_sweep_checks_its_own_switches(tmp_path):
    """A +sweep= multirun checks only each swept key's first value up front; Hydra then
    hands every run its overrides, and a run whose true/false key got a number stops there.
    Called in this process as Hydra calls each job, since through the CLI the refused job
    would come only after a whole training run of the first value."""
    from asyncrl.commands.prepare import prepare_run
    from asyncrl.config.compose import compose_config
    from asyncrl.errors import UserError

    cfg = compose_config(["algo=nstep_q", "algo.double_q=true"])  # what OmegaConf made of 2
    with pytest.raises(UserError, match="algo.double_q=2: must be true or false"):
        prepare_run(["algo=nstep_q", "algo.double_q=2"], tmp_path / "run", composed=cfg,
                    in_a_sweep=True)
    assert not (tmp_path / "run").exists()


def test_corrupt_checkpoint_is_refused_on_resume(workdir):
    run_dir = workdir / "broken"
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "checkpoints" / "last.pt").write_bytes(b"not a checkpoint at all")
    result = run_cli([f"resume={run_dir}"], workdir, timeout=120)
    assert result.returncode == 2
    assert "corrupt checkpoint" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_resume_continues_T_and_appends_to_the_same_files(workdir):
    run_dir = workdir / "run"
    first = run_cli([*SHORT_PONG, "total_frames=4000", f"hydra.run.dir={run_dir}"], workdir)
    assert first.returncode == 0, first.stderr
    t_first = checkpoint_frames(run_dir)
    assert t_first >= 4000
    rows_first = len(read_rows(run_dir / "updates.csv"))

    refused = run_cli([f"resume={run_dir}", "lr=0.1"], workdir, timeout=120)
    assert refused.returncode == 2 and "only total_frames" in refused.stderr
    # a key a resume may change, given a number for true/false
    refused = run_cli([f"resume={run_dir}", "log.tensorboard=3"], workdir, timeout=120)
    assert refused.returncode == 2, refused.stderr
    assert "log.tensorboard=3: must be true or false" in refused.stderr

    second = run_cli([f"resume={run_dir}", "total_frames=8000"], workdir)
    assert second.returncode == 0, second.stderr
    assert f"from T={t_first:,}" in (run_dir / "asyncrl.log").read_text()
    assert checkpoint_frames(run_dir) >= 8000
    updates = read_rows(run_dir / "updates.csv")
    assert len(updates) > rows_first
    assert min(int(r["frames"]) for r in updates[rows_first:]) >= t_first
    assert "total_frames: 8000" in (run_dir / "config.yaml").read_text()
    assert not (workdir / "outputs").exists()  # resuming writes into the run, nowhere else


def _start_long_run(run_dir: Path, cwd: Path, *extra: str) -> subprocess.Popen[str]:
    args = [*SHORT_PONG, "total_frames=100_000_000", f"hydra.run.dir={run_dir}", *extra]
    return subprocess.Popen([sys.executable, "-m", "asyncrl", *args], cwd=cwd, env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, preexec_fn=interruptible)


def _worker_pids(launcher: int) -> list[int]:
    return named_children(launcher, WORKER_PREFIX)


def _training_started(run_dir: Path) -> bool:
    updates = run_dir / "updates.csv"
    return updates.exists() and len(updates.read_text().splitlines()) > 2


def test_ctrl_c_stops_every_worker_saves_a_checkpoint_and_leaves_no_orphan(workdir):
    run_dir = workdir / "run"
    proc = _start_long_run(run_dir, workdir)
    try:
        assert wait_for(lambda: _training_started(run_dir), 120), "training never started"
        assert len(session_processes(proc.pid)) >= 3  # launcher + 2 workers (+ helpers)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        output, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, output
    assert "Traceback" not in output
    assert checkpoint_frames(run_dir) > 0
    assert wait_for(lambda: not session_processes(proc.pid), 10), "orphan processes left"


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as `asyncrl ... &` in a script starts it


@pytest.mark.parametrize(("start", "stop", "code", "reason"), [
    (_ignore_sigint, signal.SIGINT, 130, "interrupted"),
    (interruptible, signal.SIGTERM, 143, "terminated (SIGTERM)"),
])
def test_sigint_and_sigterm_stop_a_run_with_their_own_exit_codes(workdir, start, stop, code,
                                                                  reason):
    run_dir = workdir / "run"
    args = [*SHORT_PONG, "total_frames=100_000_000", f"hydra.run.dir={run_dir}"]
    proc = subprocess.Popen([sys.executable, "-m", "asyncrl", *args], cwd=workdir,
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True, preexec_fn=start)
    try:
        assert wait_for(lambda: _training_started(run_dir), 120), "training never started"
        os.kill(proc.pid, stop)  # the launcher alone, as `kill` from another shell
        output, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == code, output
    assert checkpoint_frames(run_dir) > 0
    status = json.loads((run_dir / "status.json").read_text())
    assert (status["status"], status["reason"]) == ("interrupted", reason)
    assert wait_for(lambda: not session_processes(proc.pid), 10), "orphan processes left"


def test_a_killed_worker_is_restarted_and_the_run_goes_on(workdir):
    run_dir = workdir / "run"
    proc = _start_long_run(run_dir, workdir)
    try:
        assert wait_for(lambda: _training_started(run_dir), 120)
        victim = _worker_pids(proc.pid)[0]
        os.kill(victim, signal.SIGKILL)
        assert wait_for(lambda: "restarting it (1/3)" in
                         (run_dir / "asyncrl.log").read_text(), 60)
        assert wait_for(lambda: len(_worker_pids(proc.pid)) >= 2 and
                         victim not in _worker_pids(proc.pid), 60)
        os.killpg(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "killed by SIGKILL" in output
    assert proc.returncode == 130


def _evaluator_pids(launcher: int) -> list[int]:
    # the evaluator lowers its priority by 5 from the launcher's own (which a niced test
    # session raises), so training comes first
    niceness = {pid: int(f[16]) for pid, f, _ in processes()}
    return [pid for pid in named_children(launcher, EVALUATOR_NAME)
            if niceness.get(pid) == min(19, niceness.get(launcher, 0) + 5)]


@contextlib.contextmanager
def _training(run_dir: Path, cwd: Path, *extra: str) -> Iterator[subprocess.Popen[str]]:
    """A long run that has started training; killed at the end if still there."""
    proc = _start_long_run(run_dir, cwd, *extra)
    try:
        assert wait_for(lambda: _training_started(run_dir), 120), "training never started"
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _logged(run_dir: Path, text: str, timeout: float) -> bool:
    return wait_for(lambda: text in (run_dir / "asyncrl.log").read_text(), timeout)


def test_a_killed_evaluator_is_restarted(workdir):
    run_dir = workdir / "run"
    with _training(run_dir, workdir, "eval.episodes=1", "eval.interval_frames=2000",
                   "eval.max_episode_frames=400") as proc:
        assert wait_for(lambda: len(_evaluator_pids(proc.pid)) == 1, 30)
        victim = _evaluator_pids(proc.pid)[0]
        os.kill(victim, signal.SIGKILL)
        assert _logged(run_dir, "the evaluator died (killed by SIGKILL); restarting it (1/3)", 60)
        assert wait_for(lambda: _evaluator_pids(proc.pid) not in ([], [victim]), 30)
        os.killpg(proc.pid, signal.SIGINT)
        proc.communicate(timeout=90)
    assert proc.returncode == 130


def test_a_worker_that_keeps_dying_stops_the_run_with_its_reason(workdir):
    run_dir = workdir / "run"
    proc = _start_long_run(run_dir, workdir, "max_worker_restarts=0")
    try:
        assert wait_for(lambda: _training_started(run_dir), 120)
        os.kill(_worker_pids(proc.pid)[0], signal.SIGKILL)
        output, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1
    assert "killed by SIGKILL) after 0 restarts; stopping the run" in output
    assert checkpoint_frames(run_dir) > 0
    assert wait_for(lambda: not session_processes(proc.pid), 10)


def test_a_hung_worker_is_killed_and_restarted(workdir):
    run_dir = workdir / "run"
    with _training(run_dir, workdir, "stall_seconds=4") as proc:
        os.kill(_worker_pids(proc.pid)[0], signal.SIGSTOP)  # alive, but never steps again
        assert _logged(run_dir, "no progress for", 60)
        assert _logged(run_dir, "restarting it (1/3)", 30)
        os.killpg(proc.pid, signal.SIGINT)
        proc.communicate(timeout=90)
    assert proc.returncode == 130
    assert wait_for(lambda: not session_processes(proc.pid), 10)


def _help_choices(usage: str) -> dict[str, str]:
    """Each group's text in --help's "Choose" block: {"algo": "a3c (default), ...", ...}."""
    block = usage.split("Choose (GROUP=OPTION):\n", 1)[1].split("\n\n", 1)[0]
    groups: dict[str, str] = {}
    group = ""
    for line in block.splitlines():
        head = re.match(r"  ([+a-z]+)=\s+(.*)", line)
        if head:
            group = head.group(1).lstrip("+")
            groups[group] = head.group(2)
        else:
            groups[group] += "\n" + line.strip()
    return groups


def _unglossed_lines(text: str) -> list[str]:
    """A group's lines without their glosses in parentheses, which may wrap."""
    return re.sub(r"\([^)]*\)", "", text).splitlines()


def _named_options(text: str) -> set[str]:
    """The option names in a group's text: each comma-separated name, its gloss in
    parentheses or after a colon left out."""
    names = set()
    for line in _unglossed_lines(text):
        line = line.split(":", 1)[0]
        names |= {chunk.strip() for chunk in line.split(",") if chunk.strip()}
    return names


def _named_envs(text: str) -> set[str]:
    """conf/env paths the env group's text names: atari/pong, maze/small|medium|large (three),
    torcs/slow_car|fast_car[_bots] (four), atari/GAME (any file of a folder), gym."""
    paths = set()
    for line in _unglossed_lines(text):
        for chunk in line.split(","):
            words = chunk.split()
            if not words:
                continue
            folder, _, last = words[0].rpartition("/")
            optional = re.fullmatch(r"(.*)\[(\w+)\]", last)  # a suffix each choice may take
            suffixes = ("", optional.group(2)) if optional else ("",)
            for choice in (optional.group(1) if optional else last).split("|"):
                paths |= {f"{folder}/{choice}{suffix}".lstrip("/") for suffix in suffixes}
    return paths


def test_help_is_the_apps_own_and_names_only_options_that_exist(workdir):
    from asyncrl.commands.usage import USAGE

    result = run_cli(["--help"], workdir)
    assert result.returncode == 0 and result.stdout == USAGE
    assert "_common" not in USAGE and "schema" not in USAGE
    choices = _help_choices(USAGE)
    assert set(choices) == {"algo", "network", "optimizer", "env", "setting", "sweep",
                            "experiment"}
    for group in ("algo", "network", "optimizer", "setting", "sweep", "experiment"):
        options = {p.stem for p in (CONF / group).glob("*.yaml") if not p.stem.startswith("_")
                   and p.stem not in RENAMED_PRESETS}  # an old name is not listed
        assert _named_options(choices[group]) == options, f"--help's {group}= choices"
    envs = _named_envs(choices["env"])
    placeholders = {path for path in envs if path.rsplit("/", 1)[-1].isupper()}
    for path in envs - placeholders:
        assert (CONF / "env" / f"{path}.yaml").is_file(), f"--help names env={path}"
    for path in placeholders:
        options = [p for p in (CONF / "env" / path).parent.glob("*.yaml")
                   if not p.name.startswith("_")]
        assert options, f"--help names env={path}"
    # every env file is named, or stands under a folder that --help names as GAME or TASK
    covered = {path.rsplit("/", 1)[0] for path in placeholders}
    for file in (CONF / "env").rglob("*.yaml"):
        path = file.relative_to(CONF / "env").with_suffix("")
        if not path.name.startswith("_") and str(path.parent) not in covered:
            assert str(path) in envs, f"--help does not name env={path}"
    assert len([p for p in (CONF / "env" / "atari").glob("*.yaml")
                if p.stem not in ("any", "_common")]) == 57  # "57 games" in the help


@pytest.mark.parametrize(("overrides", "frames_said", "lr_said", "lr"), [
    ([], "40_000_000", "A3C: 3e-3 on Atari", 3e-3),
    (["setting=paper"], "40_000_000", "or base: 7e-3 on Atari", 7e-3),
    (["env=classic/cartpole"], "classic/cartpole 150_000", "1.5e-3 on classic/cartpole", 1.5e-3),
    (["env=mujoco/hopper"], "40_000_000", "else 7e-4", 7e-4),
    (["algo=nstep_q"], "40_000_000", "value-based methods: 7e-4", 7e-4),
])
def test_the_defaults_help_names_are_the_configs(overrides, frames_said, lr_said, lr):
    from asyncrl.commands.usage import USAGE

    cfg = compose(*overrides)
    help_text = " ".join(USAGE.split())  # the defaults wrap over lines
    assert frames_said in help_text and lr_said in help_text
    assert f"{cfg.total_frames:_}" == frames_said.split()[-1]
    assert cfg.lr == lr


@pytest.mark.parametrize(("overrides", "range_said", "low", "high"), [
    ([], "LogUniform(1e-4, 1e-2)", 1e-4, 1e-2),
    (["env=mujoco/hopper"], "MuJoCo 1e-5 to 1e-1", 1e-5, 1e-1),
])
def test_the_sweep_ranges_help_names_are_the_environments(overrides, range_said, low, high):
    from asyncrl.commands.usage import USAGE

    env = compose(*overrides).env
    assert range_said in " ".join(USAGE.split())
    assert (env.sweep_lr_low, env.sweep_lr_high) == (low, high)


def test_help_and_command_line_checks_do_not_import_torch(workdir):
    # torch takes seconds to import; --help and a typo should answer well within one
    probe = ("import sys\n"
             "from asyncrl.commands import cli\n"
             "cli.register_schemas()\n"
             "cli.run_command(['env=classic/cartpole', 'workers=2'], check_only=True)\n"
             "try:\n"
             "    cli.run_command(['lrr=1'], check_only=True)\n"
             "except cli.UserError:\n"
             "    pass\n"
             "print('torch' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], cwd=workdir, env=cli_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_a_run_directory_that_holds_a_run_is_refused_without_resume(workdir):
    run_dir = workdir / "run"
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "episodes.csv").write_text("worker,frames,wall_time,score,episode_frames\n")
    before = sorted(p.name for p in run_dir.rglob("*"))
    result = run_cli(["env=classic/cartpole", "workers=1", f"hydra.run.dir={run_dir}"], workdir)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"asyncrl: error: {run_dir} already holds a run "
                                     f"(episodes.csv); continue it with resume={run_dir}, "
                                     "or choose another hydra.run.dir")
    assert sorted(p.name for p in run_dir.rglob("*")) == before


def test_runs_started_in_the_same_second_get_their_own_directories(workdir, monkeypatch):
    from datetime import datetime

    from asyncrl.commands import prepare

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 11, 26, 10, 0, 0)

    monkeypatch.chdir(workdir)
    monkeypatch.setattr(prepare, "datetime", Frozen)
    dirs = [prepare.claim_run_dir(None) for _ in range(3)]
    assert dirs == [Path("outputs/2026-11-26") / name
                    for name in ("10-00-00", "10-00-00-2", "10-00-00-3")]
    assert all((workdir / d).is_dir() for d in dirs)


def test_frame_counts_in_e_notation_are_whole_numbers():
    from asyncrl.commands.cli import whole_frame_counts

    assert whole_frame_counts(["total_frames=1e6", "lr_anneal_frames=2.5E7", "lr=1e-3",
                               "eval.interval_frames=5e5", "total_frames=1.5e0"]) == [
        "total_frames=1000000", "lr_anneal_frames=25000000", "lr=1e-3",
        "eval.interval_frames=500000", "total_frames=1.5e0"]


def test_cfg_job_shows_the_values_a_run_would_use(workdir):
    result = run_cli(["env=classic/cartpole", "--cfg", "job"], workdir)
    assert result.returncode == 0, result.stderr
    assert "${" not in result.stdout
    assert "lr: 0.0015" in result.stdout and "total_frames: 150000" in result.stdout


def test_a_full_disk_or_an_unwritable_place_is_refused_before_hydra_writes_there(
        tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    from asyncrl.commands.prepare import claim_run_dir
    from asyncrl.errors import UserError

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(10 << 20, 10 << 20, 4096))
    with pytest.raises(UserError, match=r"no room for a run in .*: 4,096 bytes free"):
        claim_run_dir(tmp_path / "a" / "b")
    assert not (tmp_path / "a").exists()  # nothing made on the way to the refusal
    monkeypatch.undo()
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(UserError, match="is not a writable directory"):
        claim_run_dir(afile / "run")
    assert claim_run_dir(tmp_path / "c")  # room enough: accepted


@pytest.mark.parametrize("algo", ["nstep_q", "a3c"])
def test_a_diverging_run_stops_every_worker_with_exit_3_and_says_why(workdir, algo):
    run_dir = workdir / "run"
    result = run_cli(["env=classic/cartpole", f"algo={algo}", "workers=2", "envs_per_worker=2",
                      "optimizer=momentum_sgd", "lr=1", "algo.max_grad_norm=1e30",
                      "total_frames=50000", *QUICK, f"hydra.run.dir={run_dir}"],
                     workdir)
    assert result.returncode == 3, result.stderr
    status = json.loads((run_dir / "status.json").read_text())
    assert status["status"] == "diverged" and "not finite" in status["reason"]
    assert status["frames"] < 50000
    assert "Traceback" not in result.stdout + result.stderr


def test_a_tool_whose_reader_goes_ends_quietly_with_141():
    # what `asyncrl-report ... | head` does: far more output than a pipe holds, read one
    # line, close the pipe; the tool must end with SIGPIPE's code and no traceback
    script = ("import sys\nfrom asyncrl.commands import run_tool\n"
              "sys.exit(run_tool('t', lambda: [print('x' * 99) for _ in range(100_000)] "
              "and 0))\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=cli_env())
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.readline() == b"x" * 99 + b"\n"
    child.stdout.close()
    assert child.wait(timeout=60) == 141
    assert child.stderr.read() == b""


def test_more_workers_than_cores_is_said_once_and_as_many_is_not(monkeypatch, caplog):
    import logging

    from asyncrl.commands import prepare

    monkeypatch.setattr(prepare, "usable_cpus", lambda: 2)
    with caplog.at_level(logging.WARNING, logger="asyncrl"):
        prepare.warn_if_cores_shared(2)
        prepare.warn_if_cores_shared(3)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith("workers=3 on 2 cores: the workers share")


def test_cfg_job_refuses_a_bad_override_in_one_line_as_a_run_does(workdir):
    result = run_cli(["--cfg", "job", "algo.entropy_betta=0.1"], workdir)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Key 'entropy_betta' not in 'A3CConfig'" in lines[0]
    shown = run_cli(["--cfg", "job", "setting=paper"], workdir)  # and a good one still prints
    assert shown.returncode == 0 and "envs_per_worker: 1" in shown.stdout


def test_each_preset_is_described_by_the_same_words_in_its_yaml_help_and_readme():
    from asyncrl.commands.usage import USAGE

    help_text = " ".join(USAGE.split())
    readme = (REPO / "README.md").read_text()
    presets = sorted((CONF / "experiment").glob("*.yaml"))
    assert presets
    for path in presets:
        second = path.read_text().splitlines()[1]
        name, _, said = second.removeprefix("# ").partition(": ")
        assert name == path.stem and said, f"{path.name}'s second line names it and says it"
        if name in RENAMED_PRESETS:  # an old name: its line says the new one, nothing else does
            assert said.startswith(f"renamed {RENAMED_PRESETS[name]} "), path.name
            assert f" {name} (" not in help_text and f"| `{name}` |" not in readme
            continue
        assert f"{name} ({said})" in help_text, f"--help describes {name} otherwise"
        assert f"| `{name}` | {said} |" in readme, f"README describes {name} otherwise"
