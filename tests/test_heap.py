from __future__ import annotations

import platform

import pytest

from asyncrl.learning.heap import keep_freed_memory


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_takes_the_workers_heap_settings():
    # mallopt returns 0 for a value it refuses (glibc caps the mmap threshold)
    assert keep_freed_memory() is True
