"""What the launcher decides about its worker and evaluator processes, apart from the processes.

Every ~0.2 s the launcher tells ``Supervisor.decide`` what it sees of each worker slot
(alive or not, its exit code, its frame count in shared memory) and carries out what comes
back: kill a slot that made no progress for ``stall_seconds``, restart one that died, or give
the run up once a slot died more than ``max_restarts`` times. A worker that stops on its own
(exit code 0) is left alone. The decisions are a function of what was seen and when, so
tests drive them with made-up observations and clock times, no process needed.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

# starting a process (imports, the first environment reset, TORCS's start) may take longer
# than any later step
STARTUP_GRACE_S = 120.0


@dataclass(frozen=True)
class Seen:
    """One worker slot, as the launcher sees it now."""

    alive: bool
    exitcode: int | None
    frames: int


@dataclass(frozen=True)
class Kill:
    """The slot is hung: kill its process (a later observation restarts it)."""

    slot: int
    reason: str


@dataclass(frozen=True)
class Restart:
    """The slot's process died: start it again; ``count`` is its restart number."""

    slot: int
    reason: str
    count: int


@dataclass(frozen=True)
class GiveUp:
    """A slot died once more than allowed: stop the run with ``reason``."""

    reason: str


Decision = Kill | Restart | GiveUp


def describe_exit(exitcode: int | None) -> str:
    """A process's exit code in words: ``killed by SIGKILL``, ``exit code 1``."""
    if exitcode is None:
        return "still running"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


@dataclass
class _Progress:
    frames: int
    since: float  # when ``frames`` last changed (or the process started)
    moved: bool  # whether it ever changed since the start


@dataclass
class Supervisor:
    """Restart counts, last progress and last reported error of every slot."""

    max_restarts: int
    stall_seconds: float
    startup_grace: float = STARTUP_GRACE_S
    restarts: dict[int, int] = field(default_factory=dict)
    evaluator_restarts: int = 0
    _progress: dict[int, _Progress] = field(default_factory=dict)
    _reasons: dict[int, str] = field(default_factory=dict)

    def started(self, slot: int, frames: int, now: float) -> None:
        """Slot ``slot``'s process was (re)started at ``now`` with ``frames`` counted."""
        self.restarts.setdefault(slot, 0)
        self._progress[slot] = _Progress(frames, now, moved=False)

    def reported(self, slot: int, reason: str) -> None:
        """The slot's worker said why it is about to die (its exception, in one line)."""
        self._reasons[slot] = reason

    def decide(self, seen: dict[int, Seen], now: float) -> list[Decision]:
        """What to do about every slot in ``seen``; a ``GiveUp`` comes last and ends the list."""
        decisions: list[Decision] = []
        for slot, state in seen.items():
            progress = self._progress[slot]
            allowed = (self.stall_seconds if progress.moved
                       else max(self.stall_seconds, self.startup_grace))
            if state.frames != progress.frames:
                self._progress[slot] = _Progress(state.frames, now, moved=True)
            elif state.alive and now - progress.since >= allowed:
                reason = f"no progress for {now - progress.since:.0f} s"
                self._reasons[slot] = reason
                decisions.append(Kill(slot, reason))
        for slot, state in seen.items():
            if state.alive or state.exitcode == 0:
                continue
            reason = self._reasons.pop(slot, "") or describe_exit(state.exitcode)
            if self.restarts[slot] >= self.max_restarts:
                decisions.append(GiveUp(f"worker {slot} died ({reason}) after "
                                        f"{self.restarts[slot]} restarts; stopping the run"))
                return decisions
            self.restarts[slot] += 1
            decisions.append(Restart(slot, reason, self.restarts[slot]))
        return decisions

    def evaluator_died(self) -> bool:
        """The evaluator's process died: True to restart it, False to go on without it
        (evaluations are the run's report, not its work)."""
        if self.evaluator_restarts >= self.max_restarts:
            return False
        self.evaluator_restarts += 1
        return True
