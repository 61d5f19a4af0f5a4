"""The user's faces: ``asyncrl`` itself (``cli.py``), ``asyncrl-eval`` (``evaluate.py``),
``asyncrl-report``, ``asyncrl-maze``, ``asyncrl-torcs`` and ``asyncrl-probe``, and the
measurement tools ``python -m asyncrl.commands.bench`` and ``bench_learning``.

Each parses its arguments and calls into the library; nothing in the library imports them
(import-linter's layers in ``nox -s lint``). The console commands besides ``asyncrl`` fail
the same way (``run_tool``): one line, ``PROG: error: MESSAGE``, on stderr and exit code 2
for a user's mistake; 130 after Ctrl-C.
"""

from __future__ import annotations

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
