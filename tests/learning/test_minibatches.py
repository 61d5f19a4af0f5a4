"""minibatches=M: a worker learns from its k segments in M optimizer steps, each on every
M-th segment at theta' synced from the shared model after the step before."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from asyncrl.algos import SegmentBatch
from asyncrl.learning.worker import (
    WorkerParts,
    learning_step,
    merged_stats,
    minibatch_count,
)
from tests.conftest import QUICK, run_cli


class FourSegments:
    """Actors that play four 1-step segments per update, rewarded 1, 2, 3 and 4."""

    def play(self, model, frames):
        return [1.0, 2.0, 3.0, 4.0]

    def frames_played(self, segments):
        return len(segments)

    def batches(self, segments):
        return [SegmentBatch(obs=torch.zeros(2, 1), actions=torch.tensor([0]),
                             rewards=[r], terminals=[False]) for r in segments]


class Squares:
    """The loss sum_i (w - r_i)^2 over the segments given, w the model's one weight."""

    summed_metrics = ("loss",)

    def __init__(self) -> None:
        self.seen: list[list[float]] = []

    def loss_many(self, model, target, batches):
        rewards = torch.tensor([b.rewards[0] for b in batches])
        self.seen.append(rewards.tolist())
        loss = (model.weight.view(()) - rewards).pow(2).sum()
        return loss, {"loss": loss.item(), "w": float(model.weight.detach())}


def _step(minibatches: int) -> tuple[float, dict[str, float], list[list[float]], int]:
    """One learning step from w = 0 with plain SGD at lr 0.1 on the shared weight: the new
    shared w, the step's stats, the groups the loss saw and the optimizer steps taken."""
    local, remote = torch.nn.Linear(1, 1, bias=False), torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        local.weight.fill_(5.0)  # stale: the step syncs theta' first
        remote.weight.zero_()
    steps = []

    def sgd(grads, lr, worker):
        steps.append(lr)
        with torch.no_grad():
            remote.weight.sub_(lr * grads[0])

    shared = SimpleNamespace(model=remote, frames=[0], target=None,
                             optimizer=SimpleNamespace(step=sgd))
    cfg = SimpleNamespace(algo=SimpleNamespace(max_grad_norm=40.0, target_update_frames=0),
                          lr=0.1, lr_anneal_frames=None, total_frames=100,
                          minibatches=minibatches)
    parts = WorkerParts(cfg, 0, Squares(), FourSegments(), local, shared)
    _, stats = learning_step(parts, 0)
    return float(remote.weight.detach()), stats, parts.algorithm.seen, len(steps)


def test_one_minibatch_is_one_step_on_the_sum_of_every_segment():
    # grad at w = 0: 2 (0 - 1) + 2 (0 - 2) + 2 (0 - 3) + 2 (0 - 4) = -20, so w = 0 + 0.1 * 20
    w, stats, seen, steps = _step(1)
    assert seen == [[1.0, 2.0, 3.0, 4.0]] and steps == 1
    assert w == pytest.approx(2.0)
    assert stats["loss"] == pytest.approx(1 + 4 + 9 + 16)


def test_two_minibatches_step_twice_each_at_the_weights_the_step_before_left():
    # segments 1 and 3 at w = 0: grad 2 (0 - 1) + 2 (0 - 3) = -8, w = 0.8; then theta'
    # synced, segments 2 and 4 at w = 0.8: grad 2 (0.8 - 2) + 2 (0.8 - 4) = -8.8, w = 1.68
    w, stats, seen, steps = _step(2)
    assert seen == [[1.0, 3.0], [2.0, 4.0]] and steps == 2
    assert w == pytest.approx(1.68)
    # the whole batch's loss: 1 + 9 at w = 0, then 1.2^2 + 3.2^2 at 0.8; other stats averaged
    assert stats["loss"] == pytest.approx(10 + 1.44 + 10.24)
    assert stats["w"] == pytest.approx(0.4)
    assert stats["lr"] == pytest.approx(0.1)


def test_four_minibatches_step_once_a_segment():
    # w: 0 -> 0.2 -> 0.2 + 0.2 * 1.8 = 0.56 -> 0.56 + 0.2 * 2.44 = 1.048
    #   -> 1.048 + 0.2 * 2.952 = 1.6384
    w, _, seen, steps = _step(4)
    assert seen == [[1.0], [2.0], [3.0], [4.0]] and steps == 4
    assert w == pytest.approx(1.6384)


@pytest.mark.parametrize(("segments", "asked", "groups"), [
    (16, 1, 1), (16, 4, 4), (3, 4, 3), (1, 2, 1), (32, 16, 16)])
def test_no_more_groups_than_segments(segments, asked, groups):
    assert minibatch_count(segments, asked) == groups


def test_a_pass_sums_its_losses_and_averages_the_rest_over_the_steps_that_have_them():
    # live_units needs two states: a group of one 1-step segment has none
    steps = [{"loss": 3.0, "policy_loss": 1.0, "entropy": 0.5, "live_units": 0.4},
             {"loss": 5.0, "policy_loss": 2.0, "entropy": 1.5}]
    assert merged_stats(steps, ("loss", "policy_loss")) == {
        "loss": 8.0, "policy_loss": 3.0, "entropy": 1.0, "live_units": 0.4}
    assert merged_stats(steps[:1], ("loss",)) == steps[0]


def test_the_cli_trains_with_minibatches_and_says_so(workdir):
    run_dir = workdir / "run"
    result = run_cli(["env=classic/cartpole", "algo=nstep_q", "workers=2", "envs_per_worker=4",
                      "minibatches=2", "total_frames=4000", *QUICK,
                      f"hydra.run.dir={run_dir}"], workdir)
    assert result.returncode == 0, result.stderr
    log = (run_dir / "asyncrl.log").read_text()
    assert "4 environments per worker, acting as one batch, learning in 2 optimizer steps" in log
    assert (run_dir / "updates.csv").read_text().count("\n") > 1
