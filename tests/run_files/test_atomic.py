"""A file written whole or not at all (reports, tables, probe readings)."""

import os
import stat

import pytest

from asyncrl.run_files import atomic
from asyncrl.run_files.atomic import write_text_atomically


def test_the_new_text_replaces_the_old_with_open_s_mode_and_no_temporary_left(tmp_path):
    path = tmp_path / "report.md"
    path.write_text("old")
    old_mask = os.umask(0o027)
    try:
        write_text_atomically(path, "new text")
    finally:
        os.umask(old_mask)
    assert path.read_text() == "new text"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # 0666 less the umask, not 0600
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_a_failed_write_keeps_the_old_contents_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "timeline.json"
    path.write_text("[1, 2]")

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_text_atomically(path, "[1, 2, 3]")
    assert path.read_text() == "[1, 2]"
    assert [p.name for p in tmp_path.iterdir()] == ["timeline.json"]
