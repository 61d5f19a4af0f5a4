"""Keep the memory a process frees in its heap, for the next block of the same size.

By default glibc serves every block above its mmap threshold (at most 32 MiB) from fresh
pages of the kernel and returns them on free, and trims the heap's free top back to the
kernel too. The learner's float copy of a batch of screens is such a block: at k = 16 and
t_max = 20 it holds 336 screens of 4 x 84 x 84, 38 MB, so every update page-faulted its way
through it again, about a third of the learner's forward and a quarter of its forward and
backward (docs/performance.md). Raising both limits keeps the pages the process has touched.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers, from glibc's malloc.h
M_MMAP_THRESHOLD = -3
KEPT_BYTES = 1 << 30  # a worker's largest block is the learner's batch, tens of MB


def keep_freed_memory() -> bool:
    """True where glibc took both settings; elsewhere (macOS, musl) nothing changes."""
    if platform.libc_ver()[0] != "glibc":
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    mallopt = getattr(ctypes.CDLL(name), "mallopt", None)
    if mallopt is None:
        return False
    kept = [mallopt(option, KEPT_BYTES) for option in (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD)]
    return all(kept)
