"""How a run's worker and evaluator processes start: forked from a server process that
has imported their code once.

With ``spawn`` each worker was a fresh interpreter that spent 2-3 s importing torch before
it built an environment, and on 2 cores the workers and the evaluator did so at once, beside
the launcher's own imports (the "workers' start" of a run's first-frame line). A fork of
the launcher itself would copy its threads and locks. The forkserver is a clean
interpreter: started as soon as the command line is checked, it imports the workers'
modules while the launcher composes its config and builds the model, and each process of
the run is then forked from it with those imports done.

This module imports no torch: the CLI starts the server before it imports anything heavy.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import forkserver

# fork needs a POSIX system; elsewhere the children start as fresh interpreters
START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
    else "spawn"
# the workers' code, the algorithms it builds by name and Atari's environment (ale-py and
# OpenCV: 0.4 s a worker); other domains import theirs in each worker
PRELOAD = ["asyncrl.learning.worker", "asyncrl.learning.evaluate", "asyncrl.algos.a3c",
           "asyncrl.algos.value_based", "asyncrl.envs.atari"]


def prepare() -> None:
    """Name what the server imports; it takes effect when the server starts (at once with
    ``start_early``, else at the first process)."""
    if START_METHOD == "forkserver":
        multiprocessing.set_forkserver_preload(PRELOAD)


def start_early() -> None:
    """Start the server now, so that its imports run beside the launcher's own."""
    if START_METHOD == "forkserver":
        prepare()
        forkserver.ensure_running()
