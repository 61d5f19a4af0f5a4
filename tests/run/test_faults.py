"""The fault suite (``nox -s faults``): a run is hit at a random moment, then resumed.

The faults: kill -9 of the launcher, a worker or the evaluator; SIGTERM and SIGINT; a disk
that fills up (a real small filesystem where one can be mounted, else ENOSPC raised by the
writers); a checkpoint damaged at random or replaced by a foreign file; a sweep stopped at
a random moment. After each the run resumes (or refuses in one line), runs to its end,
leaves every file whole, logs no frame twice and says in ``status.json`` what happened. The
cheap, fixed-moment cases of the same faults are in the default session (test_cli.py,
test_serial.py, test_sweep.py, test_outputs.py).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from asyncrl.errors import UserError
from asyncrl.run_files.checkpoint import content_digest, load_checkpoint
from tests.conftest import QUICK, cli_env, compose, run_cli
from tests.run_health import (
    LOGS,
    alive,
    children,
    is_worker_or_evaluator,
    log_health,
    process_name,
)

pytestmark = pytest.mark.faults

TOTAL = 60_000
RUN = ["env=classic/cartpole", "workers=2", f"total_frames={TOTAL}", "eval.episodes=1",
       "eval.interval_frames=10000", "checkpoint.interval_frames=8000",
       *[q for q in QUICK if not q.startswith("eval.")]]
SEEDS = [1, 2, 3]  # the random moments: each seed picks its own


def _start(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    """The CLI in a session of its own; what it prints goes to cwd/output.txt."""
    with (cwd / "output.txt").open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "asyncrl", *args], cwd=cwd,
                                env=cli_env(), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _training(run_dir: Path) -> bool:
    updates = run_dir / "updates.csv"
    return updates.exists() and len(updates.read_text().splitlines()) > 2


def _hit(run_dir: Path, cwd: Path, rng: random.Random, fault) -> int:
    """Start the run, wait a random while into training, apply ``fault``; its exit code."""
    proc = _start([*RUN, f"hydra.run.dir={run_dir}"], cwd)
    try:
        deadline = time.monotonic() + 120
        while not _training(run_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(rng.uniform(0.5, 6.0))
        fault(proc)
        return proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _resume_to_the_end(run_dir: Path, cwd: Path) -> None:
    result = run_cli([f"resume={run_dir}"], cwd, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]


def _check_whole_and_once(run_dir: Path, total: int = TOTAL) -> None:
    for name in LOGS:
        assert (run_dir / name).is_file(), f"{name} was not written"
        health = log_health(run_dir / name)
        assert health.ends_whole and not health.broken_rows, f"{name} is not whole"
        assert not health.logged_twice, f"{name}: frames logged twice"
    status = json.loads((run_dir / "status.json").read_text())
    assert status["status"] == "finished" and status["frames"] >= total
    assert status["episodes"] == log_health(run_dir / "episodes.csv").rows


@pytest.mark.parametrize("seed", SEEDS)
def test_a_killed_launcher_resumes_with_no_frame_logged_twice(tmp_path, seed):
    run_dir = tmp_path / "run"
    orphans: list[int] = []

    def kill_the_launcher(proc):
        orphans.extend(children(proc.pid))
        os.kill(proc.pid, signal.SIGKILL)

    assert _hit(run_dir, tmp_path, random.Random(seed), kill_the_launcher) == -signal.SIGKILL
    deadline = time.monotonic() + 15  # its workers and evaluator notice, and go
    while any(alive(p) for p in orphans):
        assert time.monotonic() < deadline, "processes outlived their launcher"
        time.sleep(0.2)
    assert json.loads((run_dir / "status.json").read_text())["status"] == "running"
    _resume_to_the_end(run_dir, tmp_path)
    _check_whole_and_once(run_dir)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_killed_worker_or_evaluator_is_restarted_and_the_run_finishes(tmp_path, seed):
    rng = random.Random(seed)
    run_dir = tmp_path / "run"
    killed: list[str] = []

    def kill_a_child(proc):
        named = {process_name(p): p
                 for p in children(proc.pid) if is_worker_or_evaluator(p)}
        assert sorted(named) == ["asyncrl-eval", "asyncrl-w0", "asyncrl-w1"]  # as ps shows them
        killed.append(rng.choice(sorted(named)))
        os.kill(named[killed[0]], signal.SIGKILL)

    assert _hit(run_dir, tmp_path, rng, kill_a_child) == 0
    said = ("the evaluator" if killed[0] == "asyncrl-eval"
            else f"worker {killed[0].removeprefix('asyncrl-w')}")
    log = (run_dir / "asyncrl.log").read_text()
    assert f"{said} died (killed by SIGKILL); restarting it" in log, (killed, log[-2000:])
    _check_whole_and_once(run_dir)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stopped_run_resumes_to_its_end(tmp_path, seed, stop, code):
    run_dir = tmp_path / "run"
    assert _hit(run_dir, tmp_path, random.Random(seed), lambda p: os.kill(p.pid, stop)) == code
    status = json.loads((run_dir / "status.json").read_text())
    assert status["status"] == "interrupted"
    assert load_checkpoint(run_dir / "checkpoints" / "last.pt").frames == status["frames"]
    _resume_to_the_end(run_dir, tmp_path)
    _check_whole_and_once(run_dir)


# -- a full disk ---------------------------------------------------------------------------
@contextlib.contextmanager
def _small_filesystem(where: Path, megabytes: int):
    """A tmpfs of its own at ``where``: the test then fills it, and no other disk."""
    where.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "asyncrl-faults", str(where)]
    if os.geteuid() != 0 or subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("mounting a small filesystem needs root; "
                    "test_a_full_disk_simulated_at_a_random_write stands in for it")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(disk: Path) -> None:
    with contextlib.suppress(OSError), (disk / "filler").open("wb") as out:
        while True:
            out.write(bytes(1 << 16))
            out.flush()


def _failed_for_a_full_disk(run_dir: Path) -> None:
    status = json.loads((run_dir / "status.json").read_text())
    assert status["status"] == "failed", status
    assert "No space left on device" in status["reason"]
    assert not [p.name for p in run_dir.rglob("*.tmp")], "temporary files left behind"
    load_checkpoint(run_dir / "checkpoints" / "last.pt")  # the last one written is whole


@pytest.mark.parametrize("seed", SEEDS)
def test_a_disk_that_fills_up_fails_the_run_in_one_line_and_it_resumes_once_freed(
        tmp_path, seed):
    with _small_filesystem(tmp_path / "disk", 64) as disk:
        run_dir = disk / "run"
        assert _hit(run_dir, tmp_path, random.Random(seed), lambda _: _fill(disk)) == 1
        said = (tmp_path / "output.txt").read_text()
        assert "Traceback" not in said and "Logging error" not in said, said[-3000:]
        assert [ln for ln in said.splitlines() if "ERROR" in ln], said[-2000:]
        _failed_for_a_full_disk(run_dir)
        (disk / "filler").unlink()
        _resume_to_the_end(run_dir, tmp_path)
        _check_whole_and_once(run_dir)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_full_disk_simulated_at_a_random_write(tmp_path, seed, monkeypatch):
    """Where no filesystem can be mounted: the n-th write of a log row or a checkpoint,
    n drawn at random, fails with ENOSPC as a full disk's would."""
    import asyncrl.run_files.run_directory as run_directory
    from asyncrl.run.launcher import Launcher
    from asyncrl.run_files.recorder import CsvLog

    writes_left = [random.Random(seed).randint(5, 400)]

    def full_after_some(real):
        def write(*args, **kwargs):
            writes_left[0] -= 1
            if writes_left[0] < 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(*args, **kwargs)
        return write

    monkeypatch.setattr(CsvLog, "write", full_after_some(CsvLog.write))
    monkeypatch.setattr(run_directory, "save_checkpoint",
                        full_after_some(run_directory.save_checkpoint))
    run_dir = tmp_path / "run"
    cfg = compose("env=classic/cartpole", "serial=true", "workers=1", "total_frames=20000",
                  "checkpoint.interval_frames=2000", "log.tensorboard=false", *QUICK)
    assert Launcher(cfg, run_dir).run() == 1
    _failed_for_a_full_disk(run_dir)
    monkeypatch.undo()
    _resume_to_the_end(run_dir, tmp_path)
    _check_whole_and_once(run_dir, total=20000)


# -- damaged and foreign checkpoints ---------------------------------------------------------
def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data))]


def _flip_bytes(data: bytes, rng: random.Random) -> bytes:
    damaged = bytearray(data)
    for at in rng.sample(range(len(data)), rng.randint(1, 8)):
        damaged[at] ^= 1 << rng.randrange(8)
    return bytes(damaged)


def _zero_a_block(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(0, len(data), 4096)  # what a lost write of one disk block leaves
    return data[:at] + bytes(min(4096, len(data) - at)) + data[at + 4096:]


def _foreign(data: bytes, rng: random.Random) -> bytes:
    import io

    import torch

    buffer = io.BytesIO()  # another program's checkpoint: weights, but not ours
    torch.save({"state_dict": {"fc.weight": torch.randn(4, 4)}, "epoch": rng.randint(1, 9)},
               buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("finished")
    run_dir = workdir / "run"
    short = [a for a in RUN if not a.startswith("total_frames=")]
    result = run_cli([*short, "total_frames=4000", f"hydra.run.dir={run_dir}"], workdir)
    assert result.returncode == 0, result.stderr[-2000:]
    return run_dir


def _snapshot(run_dir: Path) -> dict[str, str]:
    return {str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("damage", [_truncate, _flip_bytes, _zero_a_block, _foreign])
def test_a_damaged_or_foreign_checkpoint_is_refused_in_one_line_and_nothing_changes(
        tmp_path, finished_run, damage, seed):
    run_dir = tmp_path / "run"
    shutil.copytree(finished_run, run_dir)
    last = run_dir / "checkpoints" / "last.pt"
    original = load_checkpoint(last)
    last.write_bytes(damage(last.read_bytes(), random.Random(seed)))
    try:
        loaded = load_checkpoint(last)
    except UserError:
        pass
    else:  # bytes no reader looks at (a zip timestamp): the contents are the same
        assert content_digest(loaded) == content_digest(original)
        pytest.skip("the damage hit bytes no reader looks at; nothing to refuse")
    before = _snapshot(run_dir)
    for args, module in (([f"resume={run_dir}", "total_frames=8000"], "asyncrl"),
                         ([str(run_dir), "--episodes", "1"], "asyncrl.commands.evaluate")):
        result = run_cli(args, tmp_path, module=module)
        assert result.returncode == 2, (module, result.stderr[-2000:])
        said = result.stderr.strip().splitlines()
        assert len(said) == 1 and str(last) in said[0] and "Traceback" not in said[0], said
        assert "checkpoint" in said[0]
    assert _snapshot(run_dir) == before  # refused before anything was written


# -- a sweep stopped at a random moment ------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_a_sweep_stopped_at_a_random_moment_finishes_when_run_again(tmp_path, seed):
    rng = random.Random(seed)
    sweep_dir = tmp_path / "sweep"
    sweep_total = 12_000
    args = ["-m", "+sweep=lr_loguniform", "hydra.sweeper.trials=3", "env=classic/cartpole",
            "workers=2", f"total_frames={sweep_total}", "log.tensorboard=false",
            "checkpoint.interval_frames=3000", *QUICK, f"hydra.sweep.dir={sweep_dir}"]
    stop = rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
    proc = _start(args, tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not list(sweep_dir.glob("*/updates.csv")) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(rng.uniform(0.5, 15.0))
        os.killpg(proc.pid, stop)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    planned = json.loads((sweep_dir / "sweep.json").read_text())["runs"]
    result = run_cli(args, tmp_path, timeout=600)
    assert result.returncode == 0, (stop, result.stderr[-3000:])
    runs = json.loads((sweep_dir / "sweep.json").read_text())["runs"]
    assert [(r["subdir"], r["value"]) for r in runs] == [
        (r["subdir"], r["value"]) for r in planned]  # the same plan, carried on
    assert [r["status"] for r in runs] == ["finished"] * 3, (stop, runs)
    for run in runs:
        _check_whole_and_once(sweep_dir / run["subdir"], total=sweep_total)
