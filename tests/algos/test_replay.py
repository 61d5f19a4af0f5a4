"""The per-worker replay of segments: capacity, sampling, mixing, and copies that outlive the
worker's buffers."""

from collections import Counter

import pytest
import torch

from asyncrl.algos import SegmentBatch
from asyncrl.algos.replay import SegmentReplay


def _segment(tag: float) -> SegmentBatch:
    """A one-step segment told apart by its reward."""
    return SegmentBatch(obs=torch.full((2, 3), tag), actions=torch.tensor([0]),
                        rewards=[tag], terminals=[False])


def _replay(capacity=3, ratio=2, seed=0):
    return SegmentReplay(capacity, ratio, torch.Generator().manual_seed(seed))


def test_capacity_keeps_the_most_recent_segments():
    replay = _replay(capacity=3)
    for tag in range(5):
        replay.add(_segment(float(tag)))
    assert len(replay) == 3
    assert sorted(s.rewards[0] for s in replay.segments) == [2.0, 3.0, 4.0]
    replay.add(_segment(5.0))  # replaces the oldest, 2
    assert sorted(s.rewards[0] for s in replay.segments) == [3.0, 4.0, 5.0]


def test_draws_are_uniform_over_what_is_stored():
    replay = _replay(capacity=4)
    for tag in range(4):
        replay.add(_segment(float(tag)))
    counts = Counter(s.rewards[0] for s in replay.sample(4000))
    assert set(counts) == {0.0, 1.0, 2.0, 3.0}
    # 1000 expected each; the binomial's sd is ~27, so 150 off is far outside chance
    assert all(abs(n - 1000) < 150 for n in counts.values()), counts


def test_mixing_adds_ratio_replayed_segments_per_new_one_and_never_the_new_ones():
    replay = _replay(capacity=10, ratio=2)
    first = replay.mix([_segment(1.0)])
    assert [s.rewards[0] for s in first] == [1.0]  # nothing stored yet to replay
    mixed = replay.mix([_segment(7.0), _segment(8.0)])
    assert [s.rewards[0] for s in mixed[:2]] == [7.0, 8.0]
    assert [s.rewards[0] for s in mixed[2:]] == [1.0] * 4  # 2 per new segment, from before
    assert len(replay) == 3


def test_a_stored_segment_outlives_the_buffer_it_was_played_into():
    replay = _replay()
    buffer = torch.zeros(2, 3)
    replay.add(SegmentBatch(obs=buffer, actions=torch.tensor([1]), rewards=[1.0],
                            terminals=[True]))
    buffer.fill_(9.0)  # the worker's next segment overwrites its buffer in place
    assert replay.segments[0].obs.sum().item() == 0.0


def test_the_same_seed_draws_the_same_segments():
    def draws(seed):
        replay = _replay(capacity=5, seed=seed)
        for tag in range(5):
            replay.add(_segment(float(tag)))
        return [s.rewards[0] for s in replay.sample(20)]

    assert draws(3) == draws(3)
    assert draws(3) != draws(4)


def test_an_empty_capacity_is_refused():
    with pytest.raises(ValueError):
        _replay(capacity=0)
