from __future__ import annotations

import platform

import pytest

from asyncrl.learning import heap, worker
from tests.conftest import compose


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_takes_the_workers_heap_settings():
    # glibc returns 0 for a threshold it refuses; this one (2.35 and later) takes 1 GiB
    assert heap.keep_freed_memory() in (heap.KEPT_BYTES, heap.OLDER_GLIBC_MAX)


def test_an_older_glibc_gets_its_largest_threshold_and_a_refusal_changes_nothing(monkeypatch):
    calls = []

    class Libc:
        def __init__(self, largest: int) -> None:
            self.largest = largest

        def mallopt(self, option: int, value: int) -> int:
            calls.append((option, value))
            return int(option != heap.M_MMAP_THRESHOLD or value <= self.largest)

    monkeypatch.setattr(heap.platform, "libc_ver", lambda: ("glibc", "2.31"))
    monkeypatch.setattr(heap.ctypes, "CDLL", lambda _name: Libc(32 << 20))
    assert heap.keep_freed_memory() == heap.OLDER_GLIBC_MAX
    assert calls == [(heap.M_MMAP_THRESHOLD, heap.KEPT_BYTES),
                     (heap.M_MMAP_THRESHOLD, heap.OLDER_GLIBC_MAX),
                     (heap.M_TRIM_THRESHOLD, heap.KEPT_BYTES)]
    calls.clear()
    monkeypatch.setattr(heap.ctypes, "CDLL", lambda _name: Libc(0))
    assert heap.keep_freed_memory() == 0
    assert heap.M_TRIM_THRESHOLD not in [option for option, _ in calls]  # trim alone would hurt


def test_a_worker_keeps_its_heap_before_it_builds_its_parts(monkeypatch):
    from asyncrl.run.launcher import build_shared_state

    called = []
    monkeypatch.setattr(worker, "keep_freed_memory", lambda: called.append(True) or 0)
    cfg = compose("env=classic/cartpole", "workers=1")
    worker.build_worker_parts(worker.WorkerSpec(0), cfg, build_shared_state(cfg))
    assert called == [True]
