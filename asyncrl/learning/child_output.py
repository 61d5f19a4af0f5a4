"""Where a worker's or the evaluator's console output goes.

Their log records travel to the launcher, which prints them above its live panel and into
``asyncrl.log``. While the panel is live, whatever else a child writes to its stdout or
stderr (a C library's banner, a warning printed by a dependency) goes to a file in the run
directory: a line written straight to the terminal under a live panel shifts the screen, and
every later refresh then leaves a copy of the panel's top behind.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from asyncrl.learning import messages

CHILD_OUTPUT_FILE = "processes.log"


class OutboxHandler(logging.Handler):
    """Sends each record to the launcher as a ``messages.LogLine``."""

    def __init__(self, outbox: Any, source: str) -> None:
        super().__init__()
        self.outbox = outbox
        self.source = source

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.outbox.put(messages.LogLine(self.source, record.levelno, self.format(record)))
        except Exception:  # a closed queue at shutdown: nothing left to tell
            self.handleError(record)


def route_child_output(outbox: Any, source: str, output_file: str | None) -> None:
    """Call first thing in a child process: logging to the launcher, raw output to a file."""
    if output_file is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        fd = os.open(output_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    root = logging.getLogger()
    root.handlers[:] = [OutboxHandler(outbox, source)]
    root.setLevel(logging.INFO)
    logging.getLogger("OpenGL").setLevel(logging.WARNING)  # MuJoCo's EGL import chatters
