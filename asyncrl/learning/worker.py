"""The actor-learner loop of one worker (paper, Algorithms 1, S2 and S3), in its own process.

    repeat
        sync local theta' <- shared theta
        act up to t_max steps with the algorithm's policy on theta', or until a terminal
        accumulate gradients of the segment's loss (A3C: n-step returns bootstrapped with
        V(s; theta'); value-based: targets bootstrapped with Q(s; theta^-)); clip their norm
        step the shared parameters with them; T <- T + frames played
        refresh theta^- <- theta when T crosses a multiple of the target interval
    until T >= total_frames

Acting runs under inference_mode and the loss is recomputed afterwards as one batched
forward over the segment: keeping t_max separate autograd graphs costs about 3x more.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from asyncrl.algos import build_algorithm
from asyncrl.algos.replay import SegmentReplay
from asyncrl.envs.family import family_of
from asyncrl.learning import messages
from asyncrl.learning.child_output import route_child_output
from asyncrl.learning.heap import keep_freed_memory
from asyncrl.learning.process_name import name_this_process, worker_name
from asyncrl.learning.rollout import Actors, Segment
from asyncrl.learning.seeding import derive_seed
from asyncrl.learning.shared import START_GATE_S, SharedState
from asyncrl.nets import build_model
from asyncrl.nets.distributions import NonFiniteOutput
from asyncrl.optim import annealed_lr, clip_grad_norm

log = logging.getLogger(__name__)

LOOP_METRICS = ("grad_norm", "lr")  # logged for every algorithm, beside its own ``metrics``
# derives the replay's seed from the worker's; past every environment's index, the key that
# derives the seeds of a worker's other environments (rollout.Actors)
REPLAY_STREAM = 1_000
EXPLORATION_STREAM = 1_001  # with the run seed and the slot alone: the slot's final epsilon


@dataclass(frozen=True)
class WorkerSpec:
    """Who this worker is: its slot, how many times it was restarted, which resume it is in."""

    worker_id: int
    restart: int = 0
    generation: int = 0

    def seed(self, run_seed: int) -> int:
        return derive_seed(run_seed, self.worker_id, self.restart, self.generation)

    def exploration_seed(self, run_seed: int) -> int:
        """The same for every restart and resume of this slot."""
        return derive_seed(run_seed, self.worker_id, EXPLORATION_STREAM)


class MetricsAccumulator:
    """Sums per-update statistics and hands out their means once per interval."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.sums: dict[str, float] = {}
        self.count = 0
        self.last = time.monotonic()
        self.frames_at_last = 0

    def add(self, stats: dict[str, float]) -> None:
        for key, value in stats.items():
            self.sums[key] = self.sums.get(key, 0.0) + value
        self.count += 1

    def due(self) -> bool:
        return self.count > 0 and time.monotonic() - self.last >= self.interval

    def flush(self) -> dict[str, float]:
        means = {key: value / self.count for key, value in self.sums.items()}
        means["updates"] = float(self.count)
        self.sums, self.count, self.last = {}, 0, time.monotonic()
        return means


def worker_process(spec: WorkerSpec, cfg: Any, shared: SharedState, outbox: Any,
                   output_file: str | None = None) -> None:
    """Entry point of a worker process: owns nothing shared but what ``shared`` holds."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the launcher decides when we stop
    name_this_process(worker_name(spec.worker_id))
    route_child_output(outbox, f"worker {spec.worker_id}", output_file)
    torch.set_num_threads(1)
    try:
        run_worker(spec, cfg, shared, outbox, parent_pid=os.getppid())
    except Exception as exc:  # the launcher reports it and decides about a restart
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        outbox.put(messages.WorkerError(spec.worker_id, reason, traceback.format_exc()))
        raise SystemExit(1) from exc


class Diverged(Exception):
    """The update would write a non-finite value into the shared model."""


def _no_lap(phase: str) -> None:
    """What ``learning_step`` calls after each phase when nobody times it."""


@dataclass
class WorkerParts:
    """What one update touches: the worker's actors, its local model theta' and the shared
    state. The worker loop and the benchmark's phase split both drive ``learning_step``."""

    cfg: Any
    worker_id: int
    algorithm: Any
    actors: Actors
    model: Any
    shared: SharedState
    replay: SegmentReplay | None = None  # algo.replay_capacity > 0: Q-learning's replay

    def __post_init__(self) -> None:
        self.local_params = list(self.model.parameters())
        self.shared_params = list(self.shared.model.parameters())
        self.target_interval = self.cfg.algo.target_update_frames  # 0: no target network
        self.minibatches = int(self.cfg.minibatches)  # read once, not from the config per pass


def learning_step(parts: WorkerParts, frames_now: int,
                  lap: Callable[[str], None] = _no_lap) -> tuple[list[Segment], dict[str, float]]:
    """One pass of the loop in the module docstring: sync, act, learn, step the shared model.

    With ``minibatches`` above 1 the k segments are split into that many groups, each
    learned from and stepped into the shared model in turn, theta' synced again before
    each: nearer the optimizer steps per frame of the paper's threads, which step once a
    segment each.

    ``lap(phase)`` is called as each phase ends (sync, act, loss+backward, clip, optimizer).
    Raises ``NonFiniteOutput`` or ``Diverged`` rather than write NaN into the shared model.
    """
    _sync(parts)
    lap("sync")
    segments = parts.actors.play(parts.model, frames_now)
    lap("act")
    parts.shared.frames[parts.worker_id] += parts.actors.frames_played(segments)
    batches = parts.actors.batches(segments)
    if parts.replay is not None:
        batches = parts.replay.mix(batches)
    groups = minibatch_count(len(batches), parts.minibatches)
    steps = []
    for group in range(groups):
        if group:
            _sync(parts)
            lap("sync")
        # every groups-th segment: new and replayed segments spread over the groups alike
        steps.append(_learn(parts, batches[group::groups], frames_now, lap))
    if parts.target_interval:  # once a pass, after its last step, whatever the groups
        parts.shared.refresh_target(parts.target_interval)
        lap("optimizer")
    return segments, merged_stats(steps, parts.algorithm.summed_metrics)


def merged_stats(steps: list[dict[str, float]], summed: tuple[str, ...]) -> dict[str, float]:
    """One pass's stats from its optimizer steps': the sums (over rows) summed, the rest
    averaged over the steps that report them (``live_units`` needs two states, which a
    short group may not have)."""
    if len(steps) == 1:
        return steps[0]
    merged = {}
    for key in dict.fromkeys(key for step in steps for key in step):
        values = [step[key] for step in steps if key in step]
        merged[key] = sum(values) if key in summed else sum(values) / len(values)
    return merged


def minibatch_count(segments: int, minibatches: int) -> int:
    """How many groups ``segments`` are learned from in: ``minibatches``, or one a segment
    where there are fewer."""
    return max(1, min(minibatches, segments))


def _sync(parts: WorkerParts) -> None:
    """theta' <- theta."""
    with torch.no_grad():
        for local, remote in zip(parts.local_params, parts.shared_params, strict=True):
            local.copy_(remote)


def _learn(parts: WorkerParts, batches: list[Any], frames_now: int,
           lap: Callable[[str], None]) -> dict[str, float]:
    """The gradient of ``batches``' loss at theta', clipped, stepped into the shared model."""
    cfg, shared = parts.cfg, parts.shared
    loss, stats = parts.algorithm.loss_many(parts.model, shared.target, batches)
    # fresh gradient tensors: nothing to zero, nothing accumulated by accident
    grads = torch.autograd.grad(loss, parts.local_params)
    lap("loss+backward")
    grad_norm = clip_grad_norm(grads, cfg.algo.max_grad_norm)
    lap("clip")
    # every algorithm reports its loss as a float already: no second read of the tensor
    if not (math.isfinite(stats["loss"]) and math.isfinite(grad_norm)):
        raise Diverged(f"the loss is not finite (loss {stats['loss']}, gradient norm "
                       f"{grad_norm}) at T={frames_now:,}")
    lr = annealed_lr(cfg.lr, frames_now, cfg.lr_anneal_frames or cfg.total_frames)
    shared.optimizer.step(grads, lr, parts.worker_id)
    lap("optimizer")
    return {**stats, "grad_norm": grad_norm, "lr": lr}


def build_worker_parts(spec: WorkerSpec, cfg: Any, shared: SharedState) -> WorkerParts:
    """The worker's algorithm, environments, local model and buffers, seeded from ``spec``."""
    keep_freed_memory()  # before the first batch: its pages then stay with the process
    seed = spec.seed(cfg.seed)
    torch.manual_seed(seed)
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(seed),
                                spec.exploration_seed(cfg.seed), int(cfg.envs_per_worker))
    actors = Actors(cfg, seed, algorithm, int(cfg.envs_per_worker))
    model = build_model(cfg, actors.env.observation_space, actors.env.action_space,
                        algorithm.head)
    actors.allocate(model, algorithm.segment_steps or episode_steps(cfg.env))
    return WorkerParts(cfg, spec.worker_id, algorithm, actors, model, shared,
                       _replay(cfg.algo, seed))


def episode_steps(env_cfg: Any) -> int:
    """A whole episode's agent steps at most: the family's limit, the one config.checks
    checked (it refuses whole-episode updates where there is none)."""
    limit = family_of(env_cfg).episode_step_limit(env_cfg)
    if limit is None:
        raise ValueError(f"{env_cfg.family} environment has no time limit")
    return int(limit)


def _replay(algo_cfg: Any, seed: int) -> SegmentReplay | None:
    """The worker's replay memory if the config asks for one, on a stream of its own."""
    capacity = int(algo_cfg.replay_capacity)  # 0 where the algorithm has no replay
    if capacity < 1:
        return None
    generator = torch.Generator().manual_seed(derive_seed(seed, REPLAY_STREAM))
    return SegmentReplay(capacity, int(algo_cfg.replay_ratio), generator)


class Worker:
    """One actor-learner, built once and then stepped one update at a time: a worker
    process's loop (``run_worker``) and the serial pool drive the same object."""

    def __init__(self, spec: WorkerSpec, cfg: Any, shared: SharedState, outbox: Any) -> None:
        # RMSProp statistics decay towards denormals, where float arithmetic is ~100x slower
        torch.set_flush_denormal(True)
        self.spec, self.cfg, self.shared, self.outbox = spec, cfg, shared, outbox
        self.parts = build_worker_parts(spec, cfg, shared)
        self.metrics = MetricsAccumulator(cfg.log.interval_seconds)
        self.updates = 0
        self.running = True
        self.closed = False
        members = len(self.parts.actors.members)
        if members > 1:
            groups = minibatch_count(members, int(cfg.minibatches))
            log.info("%d environments per worker, acting as one batch%s", members,
                     f", learning in {groups} optimizer steps" if groups > 1 else "")
        log.info("%s: %s", cfg.algo.name, self.parts.algorithm.describe())
        replay = self.parts.replay
        if replay is not None:
            log.info("replay: the last %d segments, %d replayed per new one (not checkpointed)",
                     replay.capacity, replay.ratio)
        # a restarted worker joins a run already under way; only the first start waits
        gathered = spec.restart > 0 or shared.start_together(spec.worker_id)
        if not gathered and not shared.stopping():
            log.warning("the other workers were not ready after %.0f s; starting without them",
                        START_GATE_S)

    def step(self) -> bool:
        """One update, its finished episodes and (when due) its metric means sent; False,
        with nothing done, once T reached ``total_frames``, a stop was asked or the update
        diverged (said in a ``Diverged`` message)."""
        shared, outbox, worker_id = self.shared, self.outbox, self.spec.worker_id
        frames_now = shared.total_frames()
        if not self.running or shared.stopping() or frames_now >= self.cfg.total_frames:
            self.running = False
            return False
        try:
            segments, stats = learning_step(self.parts, frames_now)
        except (NonFiniteOutput, Diverged) as exc:
            where = "" if isinstance(exc, Diverged) else f" at T={frames_now:,}"
            outbox.put(messages.Diverged(worker_id, frames_now, f"{exc}{where}"))
            self.running = False
            return False
        self.metrics.add(stats)
        for environment, segment in enumerate(segments):
            if segment.finished is not None:  # the acting loop has begun the next one
                score, length = segment.finished
                outbox.put(messages.Episode(worker_id, shared.total_frames(),
                                            shared.wall_time(), score, length, environment))
        if self.metrics.due():
            outbox.put(messages.Updates(worker_id, shared.total_frames(), self.metrics.flush()))
        self.updates += 1
        return True

    def close(self) -> None:
        """Send the last interval's means (or a short run would log nothing) and release the
        environments. Once: a second call does nothing."""
        if self.closed:
            return
        self.running, self.closed = False, True
        if self.metrics.count:
            self.outbox.put(messages.Updates(self.spec.worker_id, self.shared.total_frames(),
                                             self.metrics.flush()))
        self.parts.actors.close()


def run_worker(spec: WorkerSpec, cfg: Any, shared: SharedState, outbox: Any,
               parent_pid: int | None = None) -> None:
    """Train until T reaches ``cfg.total_frames`` or the launcher asks to stop;
    ``parent_pid`` lets an orphaned worker notice and exit."""
    worker = Worker(spec, cfg, shared, outbox)
    while worker.step():
        if parent_pid is not None and worker.updates % 200 == 0 and os.getppid() != parent_pid:
            log.warning("launcher is gone; stopping")
            break
    worker.close()
