"""A worker's replay of its own recent segments, for the Q-learning methods (an option
beyond the paper: ``algo.replay_capacity``, ``algo.replay_ratio``).

Each update learns from the segments just played and, for each of them, ``ratio``
segments drawn uniformly from the last ``capacity`` this worker played. Q-learning's
one-step target is off-policy, so an old segment's target is as valid as a new one's;
n-step Q's return follows the behaviour policy's actions and takes them uncorrected, as
n-step DQN variants do. The memory lives in the worker process only: it is not
checkpointed, and a resumed or restarted worker fills it again.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from asyncrl.algos.segment import SegmentBatch
from asyncrl.nets import detach_state


def stored_copy(batch: SegmentBatch) -> SegmentBatch:
    """A segment that owns its tensors: the worker's buffers are overwritten next update."""
    return SegmentBatch(obs=batch.obs.clone(), actions=batch.actions.clone(),
                        rewards=list(batch.rewards), terminals=list(batch.terminals),
                        start_state=detach_state(batch.start_state),
                        next_action=batch.next_action)


class SegmentReplay:
    """The last ``capacity`` segments, oldest replaced first; uniform draws with
    replacement from ``generator``."""

    def __init__(self, capacity: int, ratio: int, generator: torch.Generator) -> None:
        if capacity < 1 or ratio < 0:
            raise ValueError(f"replay of capacity {capacity} and ratio {ratio}")
        self.capacity = capacity
        self.ratio = ratio
        self.generator = generator
        self.segments: list[SegmentBatch] = []
        self.oldest = 0  # where the next segment goes once the memory is full

    def __len__(self) -> int:
        return len(self.segments)

    def add(self, batch: SegmentBatch) -> None:
        copy = stored_copy(batch)
        if len(self.segments) < self.capacity:
            self.segments.append(copy)
            return
        self.segments[self.oldest] = copy
        self.oldest = (self.oldest + 1) % self.capacity

    def sample(self, count: int) -> list[SegmentBatch]:
        """``count`` stored segments drawn uniformly (none while the memory is empty)."""
        if not self.segments or count < 1:
            return []
        picks = torch.randint(len(self.segments), (count,), generator=self.generator)
        return [self.segments[i] for i in picks.tolist()]

    def mix(self, batches: Sequence[SegmentBatch]) -> list[SegmentBatch]:
        """The segments just played, then ``ratio`` replayed ones for each; the new ones are
        stored after the draw, so an update never learns one segment twice."""
        replayed = self.sample(self.ratio * len(batches))
        for batch in batches:
            self.add(batch)
        return [*batches, *replayed]
