"""The actor-learner loop of one worker (paper, Algorithm S3), run in its own process.

    repeat
        sync local theta' <- shared theta
        act up to t_max steps with pi(.|s; theta'), or until a terminal state
        R <- 0 at a terminal, else V(s_t; theta')
        accumulate gradients of the segment's loss; clip their norm
        step the shared optimizer with them; T <- T + frames played
    until T >= total_frames

Acting runs under inference_mode and the loss is recomputed afterwards as one batched
forward over the segment: keeping t_max separate autograd graphs costs about 3x more.
"""

from __future__ import annotations

import logging
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
from asyncrl.algos.a3c import A3CLoss, a3c_loss
from asyncrl.algos.returns import discounted_returns
from asyncrl.envs import frames_per_step, learning_terminal, make_env
from asyncrl.nets import build_model
from asyncrl.optim import annealed_lr, clip_grad_norm
from asyncrl.seeding import derive_seed
from asyncrl.shared import SharedState

log = logging.getLogger(__name__)


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


def worker_process(spec: WorkerSpec, cfg: Any, shared: SharedState, outbox: Any) -> None:
    """Entry point of a worker process: owns nothing shared but what ``shared`` holds."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the launcher decides when we stop
    logging.basicConfig(level=logging.INFO, format=f"[worker {spec.worker_id}] %(message)s")
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

    @property
    def steps(self) -> int:
        return len(self.rewards)


class Actor:
    """One environment, its current observation and the running score of its episode."""

    def __init__(self, cfg: Any, seed: int, generator: torch.Generator) -> None:
        self.env_cfg = cfg.env
        self.env = make_env(cfg.env)
        self.obs, _ = self.env.reset(seed=seed)
        self.generator = generator
        self.frame_skip = frames_per_step(cfg.env)
        self.clip = cfg.env.clip_rewards
        self.score = 0.0
        self.episode_frames = 0

    def rollout(self, model: torch.nn.Module, obs_buf: torch.Tensor, action_buf: torch.Tensor,
                t_max: int) -> Segment:
        """Act with pi(.|s; theta') until t_max steps or a terminal; fill the buffers.

        ``obs_buf[steps]`` ends up holding the state after the segment, which a
        non-terminal segment bootstraps from (a time-limit cut included).
        """
        rewards: list[float] = []
        terminals: list[bool] = []
        episode_over = False
        with torch.inference_mode():
            for t in range(t_max):
                obs_buf[t].copy_(torch.from_numpy(self.obs))
                logits, _ = model(obs_buf[t : t + 1])
                action = int(torch.multinomial(logits.softmax(-1)[0], 1,
                                               generator=self.generator))
                action_buf[t] = action
                self.obs, raw_reward, terminated, truncated, info = self.env.step(action)
                reward = float(raw_reward)
                self.score += reward
                self.episode_frames += self.frame_skip
                terminal = learning_terminal(self.env_cfg, terminated, info)
                rewards.append(max(-1.0, min(1.0, reward)) if self.clip else reward)
                terminals.append(terminal)
                episode_over = terminated or truncated
                if terminal or episode_over:
                    break
            obs_buf[len(rewards)].copy_(torch.from_numpy(self.obs))
        return Segment(rewards, terminals, episode_over)

    def finish_episode(self) -> tuple[float, int]:
        """Reset for the next episode; returns the finished one's raw score and frames."""
        done = (self.score, self.episode_frames)
        self.score, self.episode_frames = 0.0, 0
        self.obs, _ = self.env.reset()
        return done


def segment_gradients(
    model: torch.nn.Module,
    params: list[torch.nn.Parameter],
    obs_buf: torch.Tensor,
    action_buf: torch.Tensor,
    segment: Segment,
    algo: Any,
) -> tuple[tuple[torch.Tensor, ...], A3CLoss]:
    """d(theta') of the segment's loss: one batched forward over its states, one backward."""
    steps = segment.steps
    logits, values = model(obs_buf[: steps + 1])
    bootstrap = 0.0 if segment.terminals[-1] else float(values[steps].detach())
    returns = torch.tensor(discounted_returns(segment.rewards, segment.terminals, bootstrap,
                                              algo.gamma))
    loss = a3c_loss(logits[:steps], values[:steps], action_buf[:steps], returns,
                    algo.entropy_beta, algo.value_loss_coef)
    # fresh gradient tensors: nothing to zero, nothing accumulated by accident
    return torch.autograd.grad(loss.total, params), loss


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
    actor = Actor(cfg, seed, torch.Generator().manual_seed(seed))
    model = build_model(cfg, actor.env.observation_space, actor.env.action_space)
    local_params = list(model.parameters())
    shared_params = list(shared.model.parameters())
    algo = cfg.algo
    obs_buf = torch.zeros((algo.t_max + 1, *np.shape(actor.obs)),
                          dtype=torch.from_numpy(actor.obs).dtype)
    action_buf = torch.zeros(algo.t_max, dtype=torch.int64)
    metrics = MetricsAccumulator(cfg.log.interval_seconds)
    updates = 0

    while not shared.stopping():
        frames_now = shared.total_frames()
        if frames_now >= cfg.total_frames:
            break
        with torch.no_grad():  # theta' <- theta
            for local, remote in zip(local_params, shared_params, strict=True):
                local.copy_(remote)

        segment = actor.rollout(model, obs_buf, action_buf, algo.t_max)
        shared.frames[spec.worker_id] += segment.steps * actor.frame_skip
        grads, loss = segment_gradients(model, local_params, obs_buf, action_buf, segment, algo)
        grad_norm = clip_grad_norm(grads, algo.max_grad_norm)
        lr = annealed_lr(cfg.lr, frames_now, cfg.total_frames)
        shared.optimizer.step(grads, lr)

        metrics.add({
            "loss": loss.total.item(), "policy_loss": loss.policy.item(),
            "value_loss": loss.value.item(), "entropy": loss.entropy.item() / segment.steps,
            "grad_norm": grad_norm, "lr": lr,
        })
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
    actor.env.close()
