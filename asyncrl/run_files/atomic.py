"""Writing a whole file or none of it: a report, a table or a reading that a reader (or a
second command) may open while it is written, or that a full disk or a signal may cut."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``: the
    old contents stay whole until the new ones are, and a failed write leaves no temporary."""
    path = Path(path)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file private (0600); give it the mode open() would have
        os.fchmod(handle, 0o666 & ~_umask())
        with os.fdopen(handle, "w", newline="") as out:  # the text as given, byte for byte
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)  # reading it means setting it: set it straight back
    os.umask(mask)
    return mask
