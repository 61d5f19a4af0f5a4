"""The fault suite (``nox -s faults``): a run is hit at a random moment, then resumed.

After each fault the run resumes (or refuses in one line), runs to its end, leaves every
file whole, logs no frame twice and says in ``status.json`` what happened. The cheap,
fixed-moment cases of the same faults are in the default session (test_cli.py,
test_serial.py, test_sweep.py).
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from asyncrl.checkpoint import load_checkpoint
from tests.conftest import QUICK, cli_env, run_cli

pytestmark = pytest.mark.faults

TOTAL = 60_000
RUN = ["env=classic/cartpole", "workers=2", f"total_frames={TOTAL}", "eval.episodes=1",
       "eval.interval_frames=10000", "checkpoint.interval_frames=8000",
       *[q for q in QUICK if not q.startswith("eval.")]]
SEEDS = [1, 2, 3]  # the random moments: each seed picks its own
REORDER_SLACK = 1_000  # frames two workers' rows may arrive out of order by


def _start(run_dir: Path, cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "asyncrl", *RUN, f"hydra.run.dir={run_dir}"],
                            cwd=cwd, env=cli_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _training(run_dir: Path) -> bool:
    updates = run_dir / "updates.csv"
    return updates.exists() and len(updates.read_text().splitlines()) > 2


def _hit(run_dir: Path, cwd: Path, rng: random.Random, fault) -> int:
    """Start the run, wait a random while into training, apply ``fault``; its exit code."""
    proc = _start(run_dir, cwd)
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


def _check_whole_and_once(run_dir: Path) -> None:
    for name in ("episodes.csv", "updates.csv", "eval.csv"):
        text = (run_dir / name).read_text()
        assert text.endswith("\n"), f"{name} ends in a partial line"
        rows = list(csv.DictReader(text.splitlines()))
        assert all(None not in r.values() and "" not in (r["frames"],) for r in rows), name
        # T only grows, but for the order in which two workers' messages arrive (a few
        # steps): rows logged after the checkpoint and again after the resume would show
        # as T falling back to the checkpoint's
        frames = [int(r["frames"]) for r in rows]
        drops = [a - b for a, b in zip(frames, frames[1:], strict=False) if b < a]
        assert max(drops, default=0) < REORDER_SLACK, f"{name}: frames logged twice"
    status = json.loads((run_dir / "status.json").read_text())
    assert status["status"] == "finished" and status["frames"] >= TOTAL
    episodes = list(csv.DictReader((run_dir / "episodes.csv").open()))
    assert status["episodes"] == len(episodes)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_killed_launcher_resumes_with_no_frame_logged_twice(tmp_path, seed):
    run_dir = tmp_path / "run"
    orphans: list[int] = []

    def kill_the_launcher(proc):
        orphans.extend(_children(proc.pid))
        os.kill(proc.pid, signal.SIGKILL)

    assert _hit(run_dir, tmp_path, random.Random(seed), kill_the_launcher) == -signal.SIGKILL
    deadline = time.monotonic() + 15  # its workers and evaluator notice, and go
    while any(_alive(p) for p in orphans):
        assert time.monotonic() < deadline, "processes outlived their launcher"
        time.sleep(0.2)
    assert json.loads((run_dir / "status.json").read_text())["status"] == "running"
    _resume_to_the_end(run_dir, tmp_path)
    _check_whole_and_once(run_dir)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_killed_worker_or_evaluator_is_restarted_and_the_run_finishes(tmp_path, seed):
    rng = random.Random(seed)
    run_dir = tmp_path / "run"

    def kill_a_child(proc):
        children = [p for p in _children(proc.pid)
                    if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]
        os.kill(rng.choice(children), signal.SIGKILL)

    assert _hit(run_dir, tmp_path, rng, kill_a_child) == 0
    log = (run_dir / "asyncrl.log").read_text()
    assert re.search(r"(worker \d|the evaluator) died \(killed by SIGKILL\); restarting it", log)
    _check_whole_and_once(run_dir)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stopped_run_resumes_to_its_end(tmp_path, seed, stop, code):
    run_dir = tmp_path / "run"
    assert _hit(run_dir, tmp_path, random.Random(seed), lambda p: os.kill(p.pid, stop)) == code
    status = json.loads((run_dir / "status.json").read_text())
    assert status["status"] == "interrupted"
    assert load_checkpoint(run_dir / "checkpoints" / "last.pt")["frames"] == status["frames"]
    _resume_to_the_end(run_dir, tmp_path)
    _check_whole_and_once(run_dir)
