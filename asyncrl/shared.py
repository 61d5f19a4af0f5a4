"""What every worker process shares: the model, the optimizer statistics, the frame counter."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
from torch import nn

from asyncrl.optim import SharedRMSProp

STOP = 1


@dataclass
class SharedState:
    """Handed whole to each worker; every tensor in it lives in shared memory.

    ``frames[i]`` counts the emulator frames worker slot ``i`` has played in this session; each
    slot has one writer, so the global counter T needs no lock: it is ``base_frames`` (frames
    before a resume) plus their sum.
    """

    model: nn.Module
    optimizer: SharedRMSProp
    frames: torch.Tensor
    control: torch.Tensor
    base_frames: int = 0
    start_time: float = field(default_factory=time.time)
    wall_offset: float = 0.0

    @classmethod
    def create(cls, model: nn.Module, optimizer: SharedRMSProp, workers: int) -> SharedState:
        model.share_memory()
        optimizer.share_memory()
        return cls(
            model=model,
            optimizer=optimizer,
            frames=torch.zeros(workers, dtype=torch.int64).share_memory_(),
            control=torch.zeros(1, dtype=torch.uint8).share_memory_(),
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

    def tensors(self) -> list[torch.Tensor]:
        """Every tensor workers write to; all must be in shared memory."""
        params = [p.data for p in self.model.parameters()]
        return [*params, *self.optimizer.shared_tensors(), self.frames, self.control]
