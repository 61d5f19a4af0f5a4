"""What every worker process shares: the model, its target copy, the optimizer statistics and
the frame counter."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import torch
from torch import nn

from asyncrl.optim import AsyncOptimizer

STOP = 1
# how long a worker waits at the start for the others before it starts alone; below the
# launcher's start-up grace, so a waiting worker is never taken for a hung one
START_GATE_S = 60.0


@dataclass
class SharedState:
    """Handed whole to each worker; every tensor in it lives in shared memory.

    ``frames[i]`` counts the emulator frames worker slot ``i`` has played in this session; each
    slot has one writer, so the global counter T needs no lock: it is ``base_frames`` (frames
    before a resume) plus their sum.
    """

    model: nn.Module
    optimizer: AsyncOptimizer
    frames: torch.Tensor
    control: torch.Tensor
    ready: torch.Tensor
    target: nn.Module | None = None
    target_epoch: torch.Tensor | None = None
    base_frames: int = 0
    start_time: float = field(default_factory=time.time)
    wall_offset: float = 0.0

    @classmethod
    def create(cls, model: nn.Module, optimizer: AsyncOptimizer, workers: int,
               with_target: bool = False) -> SharedState:
        """``with_target`` adds the target network theta^- of the value-based methods, a copy
        of theta refreshed by whichever worker first sees T cross a refresh boundary."""
        model.share_memory()
        optimizer.share_memory()
        target = None
        if with_target:
            target = copy.deepcopy(model).requires_grad_(False)
            target.share_memory()
        return cls(
            model=model,
            optimizer=optimizer,
            frames=torch.zeros(workers, dtype=torch.int64).share_memory_(),
            control=torch.zeros(1, dtype=torch.uint8).share_memory_(),
            ready=torch.zeros(workers, dtype=torch.uint8).share_memory_(),
            target=target,
            target_epoch=torch.zeros(1, dtype=torch.int64).share_memory_(),
        )

    def total_frames(self) -> int:
        """The global counter T."""
        return self.base_frames + int(self.frames.sum())

    def wall_time(self) -> float:
        """Seconds of training, across resumes."""
        return self.wall_offset + time.time() - self.start_time

    def request_stop(self) -> None:
        self.control[0] = STOP

    def stopping(self) -> bool:
        return bool(self.control[0] == STOP)

    def start_together(self, slot: int, timeout: float = START_GATE_S,
                       poll: float = 0.005) -> bool:
        """Mark ``slot`` ready and wait until every slot is, the launcher stops the run, or
        ``timeout`` passes; True when all were ready.

        Workers start one after another and each takes seconds to build its
        environments (16 Atari games: 3 s on a slow core); without this gate the first
        one trains alone for that long, which is not the paper's N learners in parallel
        (a short run could end before the last worker ever stepped)."""
        self.ready[slot] = 1
        deadline = time.monotonic() + timeout
        while not bool(self.ready.all()):
            if self.stopping() or time.monotonic() >= deadline:
                return False
            time.sleep(poll)
        return True

    @torch.no_grad()
    def refresh_target(self, interval_frames: int) -> bool:
        """theta^- <- theta when T has crossed a multiple of ``interval_frames`` since the last
        refresh (Algorithm 1: "if T mod I_target == 0"). Without a lock two workers may both
        copy at the same boundary, which only copies the same theta twice."""
        if self.target is None or self.target_epoch is None:
            return False
        epoch = self.total_frames() // interval_frames
        if epoch <= int(self.target_epoch[0]):
            return False
        self.target_epoch[0] = epoch
        for target, source in zip(self.target.parameters(), self.model.parameters(),
                                  strict=True):
            target.copy_(source)
        return True

    def tensors(self) -> list[torch.Tensor]:
        """Every tensor workers write to; all must be in shared memory."""
        params = [p.data for p in self.model.parameters()]
        targets = [p.data for p in self.target.parameters()] if self.target is not None else []
        extra = [self.target_epoch] if self.target_epoch is not None else []
        return [*params, *targets, *self.optimizer.shared_tensors(), self.frames, self.control,
                self.ready, *extra]
