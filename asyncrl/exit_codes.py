"""The exit codes of every command asyncrl installs, decided here once.

Scripts and sweepers read them: 0 finished, 1 failed (a worker kept dying, a full disk),
2 a user's mistake (said in one line, nothing written), 3 diverged, 130 and 143 stopped by
SIGINT and SIGTERM with a checkpoint, as a shell reports a process those signals ended;
141 a tool whose reader closed its output (``asyncrl-report ... | head``), as SIGPIPE would.
"""

from __future__ import annotations

OK = 0
FAILED = 1
USER_ERROR = 2
DIVERGED = 3
INTERRUPTED = 130  # 128 + SIGINT
TERMINATED = 143  # 128 + SIGTERM
OUTPUT_CLOSED = 141  # 128 + SIGPIPE
STOPPED_BY_A_SIGNAL = (INTERRUPTED, TERMINATED)
