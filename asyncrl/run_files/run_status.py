"""``status.json`` in a run directory: is the run going, done, or why did it stop.

Sweeps read it to skip finished runs when resumed, and reports read it to leave out runs
still in progress and to say why a run has no score.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

from asyncrl.run_files.atomic import write_text_atomically

STATUS_FILE = "status.json"
RUNNING, FINISHED, INTERRUPTED, FAILED, DIVERGED = (
    "running", "finished", "interrupted", "failed", "diverged")
DONE = (FINISHED, FAILED, DIVERGED)  # a resumed sweep does not run these again
IN_PLACE_BYTES = 4096  # one block: a file of any size holds at least this much


def write_status(run_dir: Path, status: str, **fields: Any) -> None:
    """Replace the status file atomically: a reader never sees half of one.

    On a full disk there is no room for the new copy, yet that is when the status matters
    most ("failed: no space left"): the old file is then overwritten in place, in the
    block it already holds.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"status": status, "pid": os.getpid(), **fields}, indent=1)
    target = run_dir / STATUS_FILE
    try:
        write_text_atomically(target, text)
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT) or not _overwrite(target, text):
            raise


def _overwrite(target: Path, text: str) -> bool:
    """Write ``text`` over ``target``'s first bytes and cut it there; False where that
    needs more room than the file's first block already gives it."""
    data = text.encode()
    if len(data) > IN_PLACE_BYTES or not target.exists():
        return False
    try:
        with target.open("r+b") as out:
            out.write(data)
            out.truncate(len(data))
    except OSError:
        return False
    return True


def read_status(run_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((Path(run_dir) / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
