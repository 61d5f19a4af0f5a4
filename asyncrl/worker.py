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

import numpy as np
import torch

from asyncrl import messages
from asyncrl.algos import SegmentBatch, build_algorithm
from asyncrl.child_output import route_child_output
from asyncrl.envs import episode_step_limit, frames_per_step, learning_terminal, make_env
from asyncrl.nets import LSTMState, build_model, detach_state
from asyncrl.nets.distributions import NonFiniteOutput
from asyncrl.optim import annealed_lr, clip_grad_norm
from asyncrl.process_name import name_this_process, worker_name
from asyncrl.seeding import derive_seed
from asyncrl.shared import START_GATE_S, SharedState

log = logging.getLogger(__name__)

LOOP_METRICS = ("grad_norm", "lr")  # logged for every algorithm, beside its own ``metrics``


@dataclass(frozen=True)
class WorkerSpec:
    """Who this worker is: its slot, how many times it was restarted, which resume it is in."""

    worker_id: int
    restart: int = 0
    generation: int = 0

    def seed(self, run_seed: int) -> int:
        return derive_seed(run_seed, self.worker_id, self.restart, self.generation)


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
        outbox.put((messages.ERROR, spec.worker_id, reason, traceback.format_exc()))
        raise SystemExit(1) from exc


@dataclass
class Segment:
    """Up to t_max steps of one episode: what the loss needs, with rewards already clipped."""

    rewards: list[float]
    terminals: list[bool]
    episode_over: bool
    start_state: LSTMState | None = None
    next_action: int | None = None

    @property
    def steps(self) -> int:
        return len(self.rewards)

    def batch(self, obs_buf: torch.Tensor, action_buf: torch.Tensor) -> SegmentBatch:
        return SegmentBatch(obs=obs_buf[: self.steps + 1], actions=action_buf[: self.steps],
                            rewards=self.rewards, terminals=self.terminals,
                            start_state=self.start_state, next_action=self.next_action)


class Actor:
    """One environment, its current observation, the recurrent state before that observation,
    and the running score of its episode."""

    def __init__(self, cfg: Any, seed: int, algorithm: Any) -> None:
        self.env_cfg = cfg.env
        self.env = make_env(cfg.env)
        self.obs, _ = self.env.reset(seed=seed)
        self.algorithm = algorithm
        self.frame_skip = frames_per_step(cfg.env)
        self.clip = cfg.env.clip_rewards
        # what the learner sees; the score stays in the environment's own units
        self.reward_scale = float(getattr(cfg.env, "reward_scale", 1.0))
        self.score = 0.0
        self.episode_frames = 0
        self.state: LSTMState | None = None
        # Sarsa's a' for the current observation, chosen at the end of the previous segment,
        # with the recurrent state after it
        self.pending: tuple[int, LSTMState | None] | None = None

    def rollout(self, model: Any, obs_buf: torch.Tensor, action_buf: torch.Tensor,
                t_max: int, frames: int) -> Segment:
        """Act until t_max steps or a terminal; fill the buffers.

        ``obs_buf[steps]`` ends up holding the state after the segment, which a
        non-terminal segment bootstraps from (a time-limit cut included).
        """
        if self.state is None:
            self.state = model.initial_state()
        start_state = detach_state(self.state)
        rewards: list[float] = []
        terminals: list[bool] = []
        episode_over = False
        with torch.inference_mode():
            for t in range(t_max):
                obs_buf[t].copy_(torch.from_numpy(self.obs))
                if self.pending is not None:
                    action, self.state = self.pending
                    self.pending = None
                else:
                    action, self.state = self.algorithm.act(model, obs_buf[t : t + 1],
                                                            self.state, frames)
                action_buf[t] = action if isinstance(action, int) else torch.from_numpy(action)
                self.obs, raw_reward, terminated, truncated, info = self.env.step(action)
                reward = float(raw_reward)
                self.score += reward
                self.episode_frames += self.frame_skip
                terminal = learning_terminal(self.env_cfg, terminated, info)
                reward *= self.reward_scale
                rewards.append(max(-1.0, min(1.0, reward)) if self.clip else reward)
                terminals.append(terminal)
                episode_over = terminated or truncated
                if terminal or episode_over:
                    break
            steps = len(rewards)
            obs_buf[steps].copy_(torch.from_numpy(self.obs))
            next_action = None
            if self.algorithm.needs_next_action and not terminals[-1]:
                next_action, after = self.algorithm.act(model, obs_buf[steps : steps + 1],
                                                        self.state, frames)
                self.pending = (next_action, after)
        self.state = detach_state(self.state)  # truncated BPTT: no history past this segment
        return Segment(rewards, terminals, episode_over, start_state, next_action)

    def finish_episode(self) -> tuple[float, int]:
        """Reset for the next episode; returns the finished one's raw score and frames."""
        done = (self.score, self.episode_frames)
        self.score, self.episode_frames = 0.0, 0
        self.state, self.pending = None, None
        self.obs, _ = self.env.reset()
        return done


def run_worker(
    spec: WorkerSpec,
    cfg: Any,
    shared: SharedState,
    outbox: Any,
    parent_pid: int | None = None,
    tick: Callable[[], None] | None = None,
) -> None:
    """Train until T reaches ``cfg.total_frames`` or the launcher asks to stop.

    ``tick`` is called after every update in serial mode, so the launcher can do its
    bookkeeping in the same process; ``parent_pid`` lets an orphaned worker notice and exit.
    """
    # RMSProp statistics decay towards denormals, where float arithmetic is ~100x slower
    torch.set_flush_denormal(True)
    seed = spec.seed(cfg.seed)
    torch.manual_seed(seed)
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(seed))
    actor = Actor(cfg, seed, algorithm)
    model = build_model(cfg, actor.env.observation_space, actor.env.action_space)
    local_params = list(model.parameters())
    shared_params = list(shared.model.parameters())
    t_max = algorithm.segment_steps or episode_step_limit(actor.env)
    obs_buf = torch.zeros((t_max + 1, *np.shape(actor.obs)),
                          dtype=torch.from_numpy(actor.obs).dtype)
    action_buf = model.distribution.action_buffer(t_max)  # type: ignore[operator, union-attr]
    metrics = MetricsAccumulator(cfg.log.interval_seconds)
    target_interval = getattr(cfg.algo, "target_update_frames", 0)
    log.info("%s: %s", cfg.algo.name, algorithm.describe())
    # a restarted worker joins a run already under way; only the first start waits
    gathered = spec.restart > 0 or shared.start_together(spec.worker_id)
    if not gathered and not shared.stopping():
        log.warning("the other workers were not ready after %.0f s; starting without them",
                    START_GATE_S)
    updates = 0

    while not shared.stopping():
        frames_now = shared.total_frames()
        if frames_now >= cfg.total_frames:
            break
        with torch.no_grad():  # theta' <- theta
            for local, remote in zip(local_params, shared_params, strict=True):
                local.copy_(remote)

        try:
            segment = actor.rollout(model, obs_buf, action_buf, t_max, frames_now)
        except NonFiniteOutput as exc:
            outbox.put((messages.DIVERGED, spec.worker_id, frames_now,
                        f"{exc} at T={frames_now:,}"))
            break
        shared.frames[spec.worker_id] += segment.steps * actor.frame_skip
        loss, stats = algorithm.loss(model, shared.target, segment.batch(obs_buf, action_buf))
        # fresh gradient tensors: nothing to zero, nothing accumulated by accident
        grads = torch.autograd.grad(loss, local_params)
        grad_norm = clip_grad_norm(grads, cfg.algo.max_grad_norm)
        # every algorithm reports its loss as a float already: no second read of the tensor
        if not (math.isfinite(stats["loss"]) and math.isfinite(grad_norm)):
            # a diverged run cannot recover, and stepping would write NaN into the shared model
            value = stats["loss"]
            outbox.put((messages.DIVERGED, spec.worker_id, frames_now,
                        f"the loss is not finite (loss {value}, gradient norm {grad_norm}) "
                        f"at T={frames_now:,}"))
            break
        lr = annealed_lr(cfg.lr, frames_now, cfg.lr_anneal_frames or cfg.total_frames)
        shared.optimizer.step(grads, lr, spec.worker_id)
        if target_interval:
            shared.refresh_target(target_interval)

        metrics.add({**stats, "grad_norm": grad_norm, "lr": lr})
        if segment.episode_over:
            score, length = actor.finish_episode()
            outbox.put((messages.EPISODE, spec.worker_id, shared.total_frames(),
                        shared.wall_time(), score, length))
        if metrics.due():
            outbox.put((messages.UPDATES, spec.worker_id, shared.total_frames(), metrics.flush()))
        updates += 1
        if tick is not None:
            tick()
        elif parent_pid is not None and updates % 200 == 0 and os.getppid() != parent_pid:
            log.warning("launcher is gone; stopping")
            break
    if metrics.count:  # the last interval's means, or a short run would log nothing
        outbox.put((messages.UPDATES, spec.worker_id, shared.total_frames(), metrics.flush()))
    actor.env.close()
