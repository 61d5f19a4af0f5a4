"""The worker's update learns from its new segments and, with replay on, from replayed ones;
with replay off it hands its algorithm exactly the segments it played."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from asyncrl.algos import SegmentBatch
from asyncrl.algos.replay import SegmentReplay
from asyncrl.learning.worker import WorkerParts, learning_step


class OneSegment:
    """Actors that play one 1-step segment per update, rewarded by the update's number."""

    def __init__(self) -> None:
        self.played = 0

    def play(self, model, frames):
        self.played += 1
        return [self.played]

    def frames_played(self, segments):
        return 1

    def batches(self, segments):
        return [SegmentBatch(obs=torch.zeros(2, 1), actions=torch.tensor([0]),
                             rewards=[float(segments[0])], terminals=[False])]


class Recording:
    """An algorithm whose loss is a parameter's square and that notes what it was given."""

    summed_metrics = ("loss",)

    def __init__(self) -> None:
        self.seen: list[list[float]] = []

    def loss_many(self, model, target, batches):
        self.seen.append([b.rewards[0] for b in batches])
        loss = model.weight.pow(2).sum() + model.bias.pow(2).sum()
        return loss, {"loss": loss.item()}


def _parts(replay):
    model = torch.nn.Linear(1, 1)
    shared = SimpleNamespace(model=torch.nn.Linear(1, 1), frames=[0], target=None,
                             optimizer=SimpleNamespace(step=lambda grads, lr, worker: None))
    cfg = SimpleNamespace(algo=SimpleNamespace(max_grad_norm=40.0, target_update_frames=0),
                          lr=1e-3, lr_anneal_frames=None, total_frames=100,
                          minibatches=1)
    return WorkerParts(cfg, 0, Recording(), OneSegment(), model, shared, replay)


def test_without_replay_the_loss_sees_only_the_segments_played():
    parts = _parts(None)
    for _ in range(3):
        learning_step(parts, 0)
    assert parts.algorithm.seen == [[1.0], [2.0], [3.0]]


def test_with_replay_each_update_adds_ratio_segments_from_before():
    parts = _parts(SegmentReplay(capacity=2, ratio=2, generator=torch.Generator().manual_seed(0)))
    for _ in range(4):
        learning_step(parts, 0)
    seen = parts.algorithm.seen
    assert seen[0] == [1.0]  # nothing stored yet
    assert seen[1] == [2.0, 1.0, 1.0]
    # from the third update on, two draws from the two segments before this one
    assert all(len(s) == 3 for s in seen[2:])
    assert set(seen[2][1:]) <= {1.0, 2.0} and set(seen[3][1:]) <= {2.0, 3.0}
