"""Acting: a worker's environments, and the segments they play between two updates.

With one environment per worker (``envs_per_worker=1``, the paper's loop) an actor plays up
to t_max steps, one forward per step. With k environments the worker steps them in lock
step and acts for all of them in one batched forward, as PAAC and GA3C do; each environment
still ends its own segment at its own terminal, bootstraps on its own, and keeps its own
recurrent state, score and no-op start. An environment whose segment ended waits for the
others' segments, which are at most t_max steps, so a reset never holds them up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from asyncrl.algos import SegmentBatch
from asyncrl.envs import frames_per_step, learning_terminal, make_env
from asyncrl.nets import LSTMState, detach_state
from asyncrl.seeding import derive_seed


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

    def step(self, action: Any) -> tuple[float, bool, bool]:
        """Play ``action``: the learner's reward, whether the step is terminal for learning,
        and whether the episode is over (a time-limit cut included)."""
        self.obs, raw_reward, terminated, truncated, info = self.env.step(action)
        reward = float(raw_reward)
        self.score += reward
        self.episode_frames += self.frame_skip
        reward *= self.reward_scale
        if self.clip:
            reward = max(-1.0, min(1.0, reward))
        return reward, learning_terminal(self.env_cfg, terminated, info), terminated or truncated

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
                reward, terminal, episode_over = self.step(action)
                rewards.append(reward)
                terminals.append(terminal)
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


def _screen_layout(buffer: torch.Tensor) -> torch.Tensor:
    """Image stacks (N, C, H, W) stored channel-innermost, the layout the conv torso computes
    in: converting there would copy every batch again (docs/performance.md)."""
    if buffer.dim() == 4:
        return buffer.contiguous(memory_format=torch.channels_last)
    return buffer


class Actors:
    """A worker's k environments with their buffers: ``play`` makes one segment each."""

    def __init__(self, cfg: Any, seed: int, algorithm: Any, count: int) -> None:
        # the first keeps the worker's own seed: one environment per worker plays as before
        self.members = [Actor(cfg, seed if i == 0 else derive_seed(seed, i), algorithm)
                        for i in range(count)]
        self.algorithm = algorithm
        self.frame_skip = self.members[0].frame_skip
        self.t_max = 0
        self.obs_bufs: list[torch.Tensor] = []
        self.action_bufs: list[torch.Tensor] = []
        self.acting_obs = torch.empty(0)

    @property
    def env(self) -> Any:
        """The first environment: its spaces are every member's."""
        return self.members[0].env

    def allocate(self, model: Any, t_max: int) -> None:
        """Buffers for segments of up to ``t_max`` steps."""
        sample = torch.from_numpy(np.asarray(self.members[0].obs))
        self.t_max = t_max
        self.obs_bufs = [_screen_layout(torch.zeros((t_max + 1, *sample.shape),
                                                    dtype=sample.dtype))
                         for _ in self.members]
        self.action_bufs = [model.distribution.action_buffer(t_max) for _ in self.members]
        self.acting_obs = _screen_layout(torch.zeros((len(self.members), *sample.shape),
                                                     dtype=sample.dtype))

    def play(self, model: Any, frames: int) -> list[Segment]:
        """One segment per environment, acting on ``model`` at global step ``frames``."""
        if len(self.members) == 1:
            return [self.members[0].rollout(model, self.obs_bufs[0], self.action_bufs[0],
                                            self.t_max, frames)]
        return self._play_in_lock_step(model, frames)

    def batches(self, segments: list[Segment]) -> list[SegmentBatch]:
        return [segment.batch(obs, actions) for segment, obs, actions
                in zip(segments, self.obs_bufs, self.action_bufs, strict=True)]

    def frames_played(self, segments: list[Segment]) -> int:
        return sum(segment.steps for segment in segments) * self.frame_skip

    def _play_in_lock_step(self, model: Any, frames: int) -> list[Segment]:
        members, algorithm = self.members, self.algorithm
        for actor in members:
            if actor.state is None:
                actor.state = model.initial_state()
        starts = [detach_state(actor.state) for actor in members]
        rewards: list[list[float]] = [[] for _ in members]
        terminals: list[list[bool]] = [[] for _ in members]
        over = [False] * len(members)
        next_actions: list[Any] = [None] * len(members)
        live = list(range(len(members)))
        with torch.inference_mode():
            for t in range(self.t_max):
                actions: dict[int, Any] = {}
                choosing = []
                for i in live:
                    actor = members[i]
                    self.obs_bufs[i][t].copy_(torch.from_numpy(actor.obs))
                    if actor.pending is not None:
                        actions[i], actor.state = actor.pending
                        actor.pending = None
                    else:
                        choosing.append(i)
                if choosing:
                    obs = self.acting_obs[: len(choosing)]
                    for row, i in enumerate(choosing):
                        obs[row].copy_(self.obs_bufs[i][t])
                    chosen, states = algorithm.act_many(
                        model, obs, [members[i].state for i in choosing], frames)
                    for i, action, state in zip(choosing, chosen, states, strict=True):
                        actions[i], members[i].state = action, state
                still = []
                for i in live:
                    action = actions[i]
                    self.action_bufs[i][t] = (action if isinstance(action, int)
                                              else torch.from_numpy(action))
                    reward, terminal, over[i] = members[i].step(action)
                    rewards[i].append(reward)
                    terminals[i].append(terminal)
                    if not (terminal or over[i]):
                        still.append(i)
                live = still
                if not live:
                    break
            for i, actor in enumerate(members):
                self.obs_bufs[i][len(rewards[i])].copy_(torch.from_numpy(actor.obs))
            if algorithm.needs_next_action:
                self._choose_next_actions(model, frames, rewards, terminals, next_actions)
        for actor in members:
            actor.state = detach_state(actor.state)  # truncated BPTT, as in Actor.rollout
        return [Segment(rewards[i], terminals[i], over[i], starts[i], next_actions[i])
                for i in range(len(members))]

    def _choose_next_actions(self, model: Any, frames: int, rewards: list[list[float]],
                             terminals: list[list[bool]], next_actions: list[Any]) -> None:
        """Sarsa's a' for each segment that did not end terminally, in one forward."""
        members = self.members
        want = [i for i in range(len(members)) if not terminals[i][-1]]
        if not want:
            return
        obs = self.acting_obs[: len(want)]
        for row, i in enumerate(want):
            obs[row].copy_(self.obs_bufs[i][len(rewards[i])])
        chosen, after = self.algorithm.act_many(model, obs, [members[i].state for i in want],
                                                frames)
        for i, action, state in zip(want, chosen, after, strict=True):
            next_actions[i] = action
            members[i].pending = (action, state)

    def close(self) -> None:
        for actor in self.members:
            actor.env.close()
