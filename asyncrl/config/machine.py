"""What this machine can hold: its usable cores (the default of ``workers``) and the most
worker processes its cores and memory allow (a check of ``workers``)."""

from __future__ import annotations

import os


def usable_cpus(at_most: int | None = None) -> int:
    """Cores this process may run on (respects taskset and cgroup affinity), ``at_most``
    of them where given (``${asyncrl.cpus:16}``: the paper's 16 threads where the cores allow)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        cores = os.cpu_count() or 1
    return cores if at_most is None else max(1, min(int(at_most), cores))


WORKERS_PER_CORE = 8         # more only queue for the cores; 16 on a 2-core machine
WORKER_MEMORY_BYTES = 450e6  # one Atari worker's resident memory, measured (~415 MB)


def available_memory() -> float | None:
    """Bytes the kernel says new processes can still get (MemAvailable), if it says."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def worker_limit() -> tuple[int, str]:
    """The most worker processes this machine can hold, and what bounds it."""
    cores = usable_cpus()
    limit, why = WORKERS_PER_CORE * cores, f"{WORKERS_PER_CORE} per core on {cores} cores"
    memory = available_memory()
    if memory is not None and memory // WORKER_MEMORY_BYTES < limit:
        limit = max(1, int(memory // WORKER_MEMORY_BYTES))
        why = (f"{memory / 2**30:.1f} GiB of memory available, "
               f"~{WORKER_MEMORY_BYTES / 1e9:.2f} GB per worker")
    return limit, why
