"""Acting: a worker's environments, and the segments they play between two updates.

One loop plays every k (``envs_per_worker``; k = 1 is the paper's loop). The environments
step in lock step and those that need an action get it from one batched forward, as PAAC
and GA3C do; each environment still ends its own segment at its own terminal, bootstraps on
its own, and keeps its own recurrent state, score and no-op start. An environment whose
segment ended waits for the others' segments, which are at most t_max steps, so a reset
never holds them up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import cv2
import numpy as np
import torch

from asyncrl.algos import SegmentBatch
from asyncrl.envs import frames_per_step, learning_terminal, make_env
from asyncrl.learning.seeding import derive_seed
from asyncrl.nets import LSTMState, detach_state


class Played(NamedTuple):
    """A whole episode played: its raw score and the frames it lasted."""

    score: float
    frames: int


@dataclass
class Segment:
    """Up to t_max steps of one episode: what the loss needs, with rewards already clipped."""

    rewards: list[float]
    terminals: list[bool]
    episode_over: bool
    start_state: LSTMState | None = None
    next_action: int | None = None
    # the raw score and frames of the episode this segment ended; the learner's environment
    # has then begun its next episode (Actors.play)
    finished: Played | None = None

    @property
    def steps(self) -> int:
        return len(self.rewards)

    def batch(self, obs_buf: torch.Tensor, action_buf: torch.Tensor) -> SegmentBatch:
        return SegmentBatch(obs=obs_buf[: self.steps + 1], actions=action_buf[: self.steps],
                            rewards=self.rewards, terminals=self.terminals,
                            start_state=self.start_state, next_action=self.next_action)


class Actor:
    """One environment, its current observation, the recurrent state before that observation,
    Sarsa's pending action, and the running score of its episode."""

    def __init__(self, cfg: Any, seed: int | None, env: Any = None) -> None:
        self.env_cfg = cfg.env
        self.env = env if env is not None else make_env(cfg.env)
        self.obs, _ = self.env.reset(seed=seed)
        self.frame_skip = frames_per_step(cfg.env)
        self.clip = cfg.env.clip_rewards
        # what the learner sees; the score stays in the environment's own units
        self.reward_scale = float(cfg.env.reward_scale)
        self.score = 0.0
        self.episode_frames = 0
        self.state: LSTMState | None = None
        # Sarsa's a' for the current observation, chosen at the end of the previous segment,
        # with the recurrent state after it
        self.pending: tuple[int, LSTMState | None] | None = None
        self.video: list[Any] | None = None  # a list: each observed screen is drawn into it

    def step(self, action: Any) -> tuple[float, bool, bool]:
        """Play ``action``: the learner's reward, whether the step is terminal for learning,
        and whether the episode is over (a time-limit cut included)."""
        if self.video is not None:
            self.video.append(self.env.render())
        self.obs, raw_reward, terminated, truncated, info = self.env.step(action)
        reward = float(raw_reward)
        self.score += reward
        self.episode_frames += self.frame_skip
        reward *= self.reward_scale
        if self.clip:
            reward = max(-1.0, min(1.0, reward))
        return reward, learning_terminal(self.env_cfg, terminated, info), terminated or truncated

    @property
    def played(self) -> Played:
        """The current episode so far: its raw score and frames."""
        return Played(self.score, self.episode_frames)

    def finish_episode(self) -> Played:
        """Reset for the next episode; returns the finished one's raw score and frames."""
        done = self.played
        self.start_episode()
        return done

    def start_episode(self, seed: int | None = None) -> None:
        """A new episode from ``env.reset(seed=seed)``, with a fresh recurrent state."""
        self.score, self.episode_frames = 0.0, 0
        self.state, self.pending = None, None
        self.obs, _ = self.env.reset(seed=seed)


CV_MAX_CHANNELS = 512  # OpenCV's CV_CN_MAX: the most channels a cv::Mat holds


def _interleaved_rows(buffer: torch.Tensor) -> list[np.ndarray] | None:
    """Each row of a channels-last buffer of uint8 frame stacks as the (H, W, C) array it is
    in memory; None for any other buffer (one channel, vectors, floats)."""
    if (buffer.dim() != 4 or buffer.dtype != torch.uint8
            or not 2 <= buffer.shape[1] <= CV_MAX_CHANNELS
            or not buffer.is_contiguous(memory_format=torch.channels_last)):
        return None
    return [row.permute(1, 2, 0).numpy() for row in buffer]


def _screen_layout(buffer: torch.Tensor) -> torch.Tensor:
    """Image stacks (N, C, H, W) stored channel-innermost, the layout the conv torso computes
    in: converting there would copy every batch again (docs/notes/)."""
    if buffer.dim() == 4:
        return buffer.contiguous(memory_format=torch.channels_last)
    return buffer


class Actors:
    """A worker's k environments with their buffers: ``play`` makes one segment each.

    The acting loop owns the episodes: a learner's environment whose episode ends in a
    segment is reset there, and the segment hands back the finished episode's raw score
    and frames (``Segment.finished``). ``evaluating`` acts with the algorithm's evaluation
    policy (``eval_epsilon``) and plays whole episodes, each begun by ``play_episodes``, as
    the evaluator and ``asyncrl-eval`` do; ``envs`` are environments
    the caller built (a renderer's, an evaluation variant's) instead of ``make_env``'s.
    """

    def __init__(self, cfg: Any, seed: int, algorithm: Any, count: int,
                 evaluating: bool = False, envs: list[Any] | None = None) -> None:
        # the first keeps the worker's own seed: one environment per worker plays as before
        self.members = [Actor(cfg, seed if i == 0 else derive_seed(seed, i),
                              envs[i] if envs else None)
                        for i in range(count)]
        self.algorithm = algorithm
        self.evaluating = evaluating
        self.frame_skip = self.members[0].frame_skip
        self.t_max = 0
        self.obs_bufs: list[torch.Tensor] = []
        self.action_bufs: list[torch.Tensor] = []
        self.acting_obs = torch.empty(0)
        self.obs_rows: list[list[np.ndarray] | None] = []

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
        self.obs_rows = [_interleaved_rows(buffer) for buffer in self.obs_bufs]
        self.action_bufs = [model.distribution.action_buffer(t_max) for _ in self.members]
        self.acting_obs = _screen_layout(torch.zeros((len(self.members), *sample.shape),
                                                     dtype=sample.dtype))

    def play(self, model: Any, frames: int, only: list[int] | None = None,
             steps: int | None = None) -> list[Segment]:
        """One segment per environment (of those in ``only``, if given; the others' are
        empty), acting on ``model`` at global step ``frames``, of up to ``steps`` steps
        (t_max unless given).

        ``obs_bufs[i][steps]`` ends up holding the state after environment i's segment,
        which a non-terminal segment bootstraps from (a time-limit cut included).
        """
        members = self.members
        playing = list(range(len(members))) if only is None else list(only)
        for i in playing:
            if members[i].state is None:
                members[i].state = model.initial_state()
        segments = [Segment([], [], False, detach_state(actor.state)) for actor in members]
        actions: list[Any] = [None] * len(members)
        live = list(playing)  # those whose segment has not ended yet
        with torch.inference_mode():
            for t in range(min(steps or self.t_max, self.t_max)):
                choosing = []
                for i in live:
                    actor = members[i]
                    self._store(i, t, actor.obs)
                    if actor.pending is not None:  # Sarsa's a', chosen when it bootstrapped
                        actions[i], actor.state = actor.pending
                        actor.pending = None
                    else:
                        choosing.append(i)
                if choosing:
                    chosen, states = self._act(model, frames, choosing, [t] * len(choosing))
                    for i, action, state in zip(choosing, chosen, states, strict=True):
                        actions[i], members[i].state = action, state
                still = []
                for i in live:
                    segment, action = segments[i], actions[i]
                    self.action_bufs[i][t] = (action if isinstance(action, int)
                                              else torch.from_numpy(action))
                    reward, terminal, segment.episode_over = members[i].step(action)
                    segment.rewards.append(reward)
                    segment.terminals.append(terminal)
                    if not (terminal or segment.episode_over):
                        still.append(i)
                live = still
                if not live:
                    break
            for i in playing:
                self._store(i, segments[i].steps, members[i].obs)
            if self.algorithm.needs_next_action and not self.evaluating:
                self._choose_next_actions(model, frames, segments, playing)
        for i in playing:  # truncated BPTT: no history past here
            members[i].state = detach_state(members[i].state)
        if not self.evaluating:  # a learner's environment goes straight on to its next episode
            for i in playing:
                if segments[i].episode_over:
                    segments[i].finished = members[i].finish_episode()
                    self.algorithm.episode_began(i)
        return segments

    def _store(self, i: int, row: int, obs: Any) -> None:
        """Environment i's observation into ``row`` of its buffer. A uint8 stack of frames
        goes into the channels-last row through ``cv2.merge``, which interleaves the frames
        about 5x faster than torch's strided copy (Atari's 4 x 84 x 84: 3.4 against 17.4 us,
        336 times an update of the t_max 20 preset; docs/notes/); anything else, or
        a shape cv2 does not write in place, torch copies, and checks, as before."""
        rows = self.obs_rows[i]
        if (rows is not None and isinstance(obs, np.ndarray) and obs.dtype == np.uint8
                and cv2.merge(list(obs), dst=rows[row]) is rows[row]):
            return
        self.obs_bufs[i][row].copy_(torch.from_numpy(np.asarray(obs)))

    def play_episode(self, model: Any, max_steps: int, seed: int | None = None,
                     member: int = 0) -> Played:
        """One whole episode of ``member`` from ``env.reset(seed=seed)``, to its end or
        ``max_steps``, with a fresh recurrent state; returns its raw score and frames."""
        return self.play_episodes(model, max_steps, [member], seed)[0]

    def play_episodes(self, model: Any, max_steps: int, members: list[int] | None = None,
                      seed: int | None = None) -> list[Played]:
        """One whole episode on each of ``members`` (all, unless given) at once, each from a
        fresh ``env.reset(seed=seed)`` and recurrent state, to its end or ``max_steps``,
        their actions chosen in one forward per step; returns their raw scores and frames
        in that order. Episodes begun are played out: a run that ends mid-evaluation still
        logs it."""
        going = list(range(len(self.members))) if members is None else list(members)
        for i in going:
            self.members[i].start_episode(seed)
        steps_done = dict.fromkeys(going, 0)
        ended: dict[int, Played] = {}  # a learner's actors begin the next episode at once
        while going:
            steps = min(max_steps - steps_done[i] for i in going)
            segments = self.play(model, 0, going, steps)
            for i in going:
                steps_done[i] += segments[i].steps
                finished = segments[i].finished
                if finished is not None:
                    ended[i] = finished
            going = [i for i in going
                     if not segments[i].episode_over and steps_done[i] < max_steps]
        return [ended.get(i, self.members[i].played) for i in steps_done]

    def _act(self, model: Any, frames: int, who: list[int], rows: list[int]
             ) -> tuple[list[Any], list[Any]]:
        """The algorithm's actions for members ``who``, each on ``obs_bufs[i][rows[j]]``,
        from one forward."""
        if len(who) == 1:  # a view of the buffer: no copy (every step of the paper's loop)
            obs = self.obs_bufs[who[0]][rows[0] : rows[0] + 1]
        else:
            obs = self.acting_obs[: len(who)]
            for j, (i, row) in enumerate(zip(who, rows, strict=True)):
                obs[j].copy_(self.obs_bufs[i][row])
        return self.algorithm.act(model, obs, [self.members[i].state for i in who], frames,
                                  self.evaluating, who)

    def _choose_next_actions(self, model: Any, frames: int, segments: list[Segment],
                             playing: list[int]) -> None:
        """Sarsa's a' for each segment that did not end terminally, in one forward; the
        next segment takes it, with the recurrent state after it."""
        want = [i for i in playing if not segments[i].terminals[-1]]
        if not want:
            return
        chosen, after = self._act(model, frames, want, [segments[i].steps for i in want])
        for i, action, state in zip(want, chosen, after, strict=True):
            segments[i].next_action = action
            self.members[i].pending = (action, state)

    def batches(self, segments: list[Segment]) -> list[SegmentBatch]:
        return [segment.batch(obs, actions) for segment, obs, actions
                in zip(segments, self.obs_bufs, self.action_bufs, strict=True)]

    def frames_played(self, segments: list[Segment]) -> int:
        return sum(segment.steps for segment in segments) * self.frame_skip

    def close(self) -> None:
        for actor in self.members:
            actor.env.close()
