"""Keep the memory a worker frees in its heap, for the next block of the same size.

By default glibc serves every block above its mmap threshold (128 KiB at first, raised as
such blocks are freed, to 32 MiB at most) from fresh pages of the kernel and returns them
on free, and trims the heap's free top back to the kernel too. The learner's float copy of
a batch of screens is such a block: at k = 16 and t_max = 20 it holds 336 screens of
4 x 84 x 84, 38 MB, so every update page-faulted its way through it again, about half of
the learner's forward and a third of its forward and backward (docs/notes/).
Raising both limits keeps the pages the process has touched.
"""

from __future__ import annotations

import ctypes
import platform

M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers, from glibc's malloc.h
M_MMAP_THRESHOLD = -3
KEPT_BYTES = 1 << 30  # a worker's largest block is the learner's batch, tens of MB
# glibc before about 2.35 refuses an mmap threshold above half its 64 MiB heap size
OLDER_GLIBC_MAX = 32 << 20


def keep_freed_memory() -> int:
    """The mmap threshold now in force, in bytes; 0 where nothing changed (not glibc, or
    glibc refused). The trim limit is raised only once a threshold is set: a trim limit
    alone would fix the threshold at its first 128 KiB and map every larger block afresh."""
    if platform.libc_ver()[0] != "glibc":
        return 0
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)  # the process's own libc
    if mallopt is None:
        return 0
    for threshold in (KEPT_BYTES, OLDER_GLIBC_MAX):
        if mallopt(M_MMAP_THRESHOLD, threshold):
            mallopt(M_TRIM_THRESHOLD, KEPT_BYTES)
            return threshold
    return 0
