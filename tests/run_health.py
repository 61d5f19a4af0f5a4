"""What the fault suite and the soak read of a run: its processes, and its logs' health."""

from __future__ import annotations

import csv
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from asyncrl.learning.process_name import EVALUATOR_NAME, WORKER_PREFIX

LOGS = ("episodes.csv", "updates.csv", "eval.csv")
REORDER_SLACK = 1_000  # frames two workers' rows may arrive out of order by


def checkpoint_frames(run_dir: Path) -> int:
    """T in the run's last checkpoint (the T = 0 save has 0)."""
    return int(torch.load(run_dir / "checkpoints" / "last.pt", weights_only=True)["frames"])


def processes() -> Iterator[tuple[int, list[str], bytes]]:
    """(pid, fields of /proc/PID/stat after the command name, cmdline) of every process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        yield int(entry.name), fields, cmdline


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name (state, ppid, pgrp, session, ...); None once
    the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def parent_of(pid: int) -> int | None:
    """The pid of ``pid``'s parent (None once it is gone)."""
    fields = _stat_fields(pid)
    return int(fields[1]) if fields else None


def session_of(pid: int) -> int | None:
    """The session ``pid`` belongs to (None once it is gone)."""
    fields = _stat_fields(pid)
    return int(fields[3]) if fields else None


def session_processes(session: int) -> list[int]:
    # fields: state, ppid, pgrp, session
    return [pid for pid, f, _ in processes() if int(f[3]) == session and f[0] != "Z"]


def wait_for(predicate: Callable[[], object], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    return False


def interruptible() -> None:
    # a shell starts background jobs with SIGINT ignored, and Python then installs no Ctrl-C
    # handler: undo that, so the test means the same however pytest itself was started
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def children(pid: int) -> list[int]:
    """Live (not zombie) descendants of ``pid``: its children and theirs. A run's workers and
    evaluator are forked by the forkserver, the launcher's child, so they are grandchildren."""
    parent_of = {child: int(f[1]) for child, f, _ in processes() if f[0] != "Z"}
    found, frontier = [], {pid}
    while frontier:
        below = [child for child, parent in parent_of.items() if parent in frontier]
        found.extend(below)
        frontier = set(below)
    return found


def alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def process_name(pid: int) -> str:
    """The name a process gave itself (``asyncrl-w0``); "" once it is gone."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def is_worker_or_evaluator(pid: int) -> bool:
    """A worker or the evaluator, by the name it gives itself; not the forkserver, TORCS or
    a shell."""
    name = process_name(pid)
    return name.startswith(WORKER_PREFIX) or name == EVALUATOR_NAME


def named_children(launcher: int, prefix: str) -> list[int]:
    """The run's processes whose name starts with ``prefix`` (``asyncrl-w``, ``asyncrl-eval``)."""
    return [pid for pid in children(launcher) if process_name(pid).startswith(prefix)]


@dataclass
class LogHealth:
    """One CSV log: is it whole, and does any frame appear twice.

    T only grows, but for the order in which two workers' messages arrive (a few steps):
    rows logged after a checkpoint and again after the resume would show as T falling back
    to the checkpoint's by more than REORDER_SLACK."""

    name: str
    rows: int
    ends_whole: bool        # the last line is complete
    broken_rows: int        # rows with a missing field
    largest_fallback: int   # frames T fell back by, at most
    fallbacks: int          # times T fell back by more than REORDER_SLACK
    frames: list[int]

    @property
    def logged_twice(self) -> bool:
        return self.fallbacks > 0


def log_health(path: Path) -> LogHealth:
    text = path.read_text() if path.exists() else ""
    rows = list(csv.DictReader(text.splitlines()))
    broken = sum(1 for r in rows if None in r.values() or not r.get("frames"))
    frames = [int(r["frames"]) for r in rows if r.get("frames")]
    drops = [a - b for a, b in zip(frames, frames[1:], strict=False) if b < a]
    return LogHealth(name=path.name, rows=len(rows), ends_whole=not text or text.endswith("\n"),
                     broken_rows=broken, largest_fallback=max(drops, default=0),
                     fallbacks=sum(1 for d in drops if d >= REORDER_SLACK), frames=frames)


def largest_episode_gap(run_dir: Path, workers: int) -> tuple[int, int]:
    """The largest T between two consecutive episode ends, and the most it can be when
    none is missing: every worker in the middle of its longest episode, plus one more for
    the unfinished episode of a worker killed in between."""
    rows = list(csv.DictReader((run_dir / "episodes.csv").read_text().splitlines()))
    frames = sorted(int(r["frames"]) for r in rows)
    gap = max((b - a for a, b in zip(frames, frames[1:], strict=False)), default=0)
    longest = max((int(r["episode_frames"]) for r in rows), default=0)
    return gap, (workers + 1) * longest + REORDER_SLACK
