"""How long a run takes from the command to its first frame, and where that time goes.

A user feels the wait before anything moves; the launcher logs it once, by phase, and the
bench reads that line back (``asyncrl.commands.bench --sections startup``).
"""

from __future__ import annotations

import os
import re
import time

FIRST_FRAME_PREFIX = "first frame"
_FIRST_FRAME = re.compile(rf"{FIRST_FRAME_PREFIX} ([0-9.]+) s after the command \((.*)\)")
_PHASE = re.compile(r"(.+) ([0-9.]+) s")


def process_age() -> float | None:
    """Seconds since this process was started, as the kernel recorded it (Linux); None elsewhere.

    Counted from the exec, so it includes the interpreter's start and every import, which
    a timer started in our own code would miss."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            # the name in parentheses may hold spaces: fields are counted after its ')'
            after_name = stat.read().rsplit(")", 1)[1].split()
        started = int(after_name[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return None


# the launcher's phases; the first two pass before a run's wall_time starts (the report
# adds them back to count from the command)
IMPORTS = "imports and config"
MODEL = "model"
RUN_DIRECTORY = "run directory"
WORKERS = "workers' start"
BEFORE_THE_CLOCK = (IMPORTS, MODEL)

_clocks_started = 0  # in this process: a multirun's or asyncrl.train's later runs share it


class StartupClock:
    """Marks the launcher's phases; ``finish()`` says the first frame's line.

    The first run of a process counts from the exec. A later run in the same process (the
    jobs of a multirun, ``asyncrl.train`` called twice) counts from its own launcher: its
    command was typed long before, and its imports were done by then."""

    def __init__(self) -> None:
        global _clocks_started
        age = process_age() if _clocks_started == 0 else 0.0
        _clocks_started += 1
        self.origin = None if age is None else time.monotonic() - age
        self.marks: list[tuple[str, float]] = []
        self.done = False

    def mark(self, phase: str) -> None:
        """The phase that ends now (its time counts from the previous mark, or the origin)."""
        if self.origin is not None:
            self.marks.append((phase, time.monotonic() - self.origin))

    def finish(self) -> str | None:
        """The first frame has come: the line that says so, or None where the start is
        unknown."""
        self.mark(WORKERS)
        self.done = True
        return self.report()

    def report(self) -> str | None:
        """'first frame 3.1 s after the command (imports and config 1.2 s, ...)'."""
        if not self.marks:
            return None
        parts, before = [], 0.0
        for phase, at in self.marks:
            parts.append(f"{phase} {at - before:.1f} s")
            before = at
        return f"{FIRST_FRAME_PREFIX} {before:.1f} s after the command ({', '.join(parts)})"


def first_frame_phases(log_text: str) -> dict[str, float] | None:
    """What a run's log says its first frame took: ``{"total": s, phase: s, ...}`` from the
    last such line (a resume's), None if there is none."""
    found = _FIRST_FRAME.findall(log_text)
    if not found:
        return None
    total, phases = found[-1]
    out = {"total": float(total)}
    for part in phases.split(", "):
        matched = _PHASE.fullmatch(part)
        if matched:
            out[matched.group(1)] = float(matched.group(2))
    return out
