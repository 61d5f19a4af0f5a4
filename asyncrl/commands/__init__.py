"""The user's faces: ``asyncrl`` itself (``cli.py``), ``asyncrl-eval`` (``evaluate.py``),
``asyncrl-report``, ``asyncrl-maze``, ``asyncrl-torcs`` and ``asyncrl-probe``, and
``python -m asyncrl.commands.bench``; the last two only start the measurement harnesses
in ``asyncrl.tools``.

Each parses its arguments and calls into the library; nothing in the library imports them
(import-linter's layers in ``nox -s lint``). The console commands besides ``asyncrl`` fail
the same way (``run_tool``): one line, ``PROG: error: MESSAGE``, on stderr and exit code 2
for a user's mistake; 130 after Ctrl-C; 141, quietly, when the reader of their output
goes (``asyncrl-report ... | head``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from asyncrl import exit_codes
from asyncrl.errors import UserError


def run_tool(prog: str, body: Callable[[], int | None]) -> int:
    """``body()``'s exit code, with a ``UserError`` said in one line instead of a traceback."""
    try:
        return body() or 0
    except UserError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return exit_codes.USER_ERROR
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED
    except BrokenPipeError:
        # the reader stopped reading: what is left to print goes nowhere, and the
        # interpreter's last flush at exit must not fail on the closed pipe again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exit_codes.OUTPUT_CLOSED
