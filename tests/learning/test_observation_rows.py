"""A worker's segment buffers hold exactly the observations its environments returned,
whether cv2 interleaves a frame stack into a channels-last row or torch copies it."""

from __future__ import annotations

import cv2
import gymnasium as gym
import numpy as np
import pytest
import torch

from asyncrl.algos import build_algorithm
from asyncrl.learning.rollout import Actors
from asyncrl.nets import build_model
from tests.conftest import compose


class RecordedFrames(gym.Env):
    """Random frame stacks of a given shape and dtype, each one kept for the test."""

    def __init__(self, shape: tuple[int, ...], dtype: type, seed: int) -> None:
        self.observation_space = gym.spaces.Box(0, 255, shape, dtype)
        self.action_space = gym.spaces.Discrete(6)
        self.rng = np.random.default_rng(seed)
        self.shape, self.dtype = shape, dtype
        self.seen: list[np.ndarray] = []

    def _frames(self) -> np.ndarray:
        frames = self.rng.integers(0, 256, self.shape).astype(self.dtype)
        self.seen.append(frames.copy())
        return frames

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._frames(), {}

    def step(self, action):
        return self._frames(), 0.0, False, False, {}


def _played(shape: tuple[int, ...], dtype: type) -> tuple[Actors, list[RecordedFrames]]:
    cfg = compose("env=atari/pong", "envs_per_worker=2")
    envs = [RecordedFrames(shape, dtype, seed) for seed in (1, 2)]
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(0))
    actors = Actors(cfg, 5, algorithm, 2, envs=envs)
    model = build_model(cfg, envs[0].observation_space, envs[0].action_space, algorithm.head)
    actors.allocate(model, 4)
    segments = actors.play(model, 0)
    assert [s.steps for s in segments] == [4, 4]
    return actors, envs


@pytest.mark.parametrize("shape", [(4, 84, 84), (3, 84, 84), (12, 36, 36)])
def test_frame_stacks_land_in_their_rows_through_cv2(shape):
    actors, envs = _played(shape, np.uint8)
    assert all(rows is not None for rows in actors.obs_rows)  # the interleaving path
    for buffer, rows, env in zip(actors.obs_bufs, actors.obs_rows, envs, strict=True):
        assert buffer.is_contiguous(memory_format=torch.channels_last)
        # the reset's stack, then one a step; row 4 holds the state the segment bootstraps from
        for row, frames in enumerate(env.seen):
            assert torch.equal(buffer[row], torch.from_numpy(frames))
        # cv2 wrote into the row itself: were it to hand back a new array, every copy would
        # fall back to torch's, right but 5x slower
        assert cv2.merge(list(env.seen[-1]), dst=rows[0]) is rows[0]


def test_a_strided_frame_stack_lands_as_its_values():
    actors, _ = _played((4, 84, 84), np.uint8)
    frames = np.random.default_rng(3).integers(0, 256, (4, 168, 84), dtype=np.uint8)[:, ::2]
    actors._store(0, 2, frames)  # a view every other row: not contiguous
    assert torch.equal(actors.obs_bufs[0][2], torch.from_numpy(np.ascontiguousarray(frames)))
    actors._store(1, 3, torch.from_numpy(frames.copy()))  # not an array: torch copies it
    assert torch.equal(actors.obs_bufs[1][3], torch.from_numpy(np.ascontiguousarray(frames)))


def test_one_frame_and_float_frames_are_copied_by_torch_as_before():
    for shape, dtype in (((1, 84, 84), np.uint8), ((4, 84, 84), np.float32)):
        actors, envs = _played(shape, dtype)
        assert actors.obs_rows == [None, None]
        for buffer, env in zip(actors.obs_bufs, envs, strict=True):
            for row, frames in enumerate(env.seen):
                assert torch.equal(buffer[row], torch.from_numpy(frames))
