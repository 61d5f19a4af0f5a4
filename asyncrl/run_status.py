"""``status.json`` in a run directory: is the run going, done, or why did it stop.

Sweeps read it to skip finished runs when resumed, and reports read it to leave out runs
still in progress and to say why a run has no score.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

STATUS_FILE = "status.json"
RUNNING, FINISHED, INTERRUPTED, FAILED, DIVERGED = (
    "running", "finished", "interrupted", "failed", "diverged")
DONE = (FINISHED, FAILED, DIVERGED)  # a resumed sweep does not run these again


def write_status(run_dir: Path, status: str, **fields: Any) -> None:
    """Replace the status file atomically: a reader never sees half of one."""
    run_dir.mkdir(parents=True, exist_ok=True)
    record = {"status": status, "pid": os.getpid(), **fields}
    handle, tmp = tempfile.mkstemp(dir=run_dir, prefix=".status.", suffix=".tmp")
    with os.fdopen(handle, "w") as out:
        json.dump(record, out, indent=1)
    os.replace(tmp, run_dir / STATUS_FILE)


def read_status(run_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((Path(run_dir) / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
