"""A child process's name in ps, top and /proc: ``asyncrl-w0`` .. ``asyncrl-wN``, ``asyncrl-eval``.

Spawned children all show as ``python``; a name tells a user which one is eating memory
or stuck, and lets a fault test kill the evaluator rather than a worker.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

COMM_LIMIT = 15  # the kernel keeps this many bytes of a task's name
WORKER_PREFIX = "asyncrl-w"


def worker_name(worker_id: int) -> str:
    return f"{WORKER_PREFIX}{worker_id}"


EVALUATOR_NAME = "asyncrl-eval"


def name_this_process(name: str) -> None:
    """Linux only; elsewhere the process keeps its name."""
    with contextlib.suppress(OSError):
        Path("/proc/self/comm").write_text(name[:COMM_LIMIT])
