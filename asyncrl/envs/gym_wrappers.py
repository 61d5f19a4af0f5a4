"""Wrappers that put any gymnasium environment into the form asyncrl's networks take:
float32 vectors, or uint8 image stacks (C, H, W); actions numbered from 0. Each records its
constructor's arguments, as gymnasium's own wrappers do, so a wrapped environment's spec can
rebuild it (gymnasium's env checker does)."""

from __future__ import annotations

from typing import Any

import cv2
import gymnasium as gym
import numpy as np
from gymnasium.utils import RecordConstructorArgs

cv2.setNumThreads(1)  # a worker owns one core; OpenCV's pool would fight the other workers


class VectorState(gym.ObservationWrapper, RecordConstructorArgs):
    """A Box vector as float32 (the MLP's dtype; float64 states would be cast every step)."""

    def __init__(self, env: gym.Env) -> None:
        RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        space = env.observation_space
        assert isinstance(space, gym.spaces.Box)
        self.observation_space = gym.spaces.Box(space.low.astype(np.float32),
                                                space.high.astype(np.float32),
                                                dtype=np.float32)

    def observation(self, observation: Any) -> np.ndarray:
        return np.asarray(observation, dtype=np.float32)


class OneHotState(gym.ObservationWrapper, RecordConstructorArgs):
    """A Discrete state (FrozenLake's square, Taxi's code) as a one-hot float32 vector."""

    def __init__(self, env: gym.Env) -> None:
        RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        space = env.observation_space
        assert isinstance(space, gym.spaces.Discrete)
        self._start, self._n = int(space.start), int(space.n)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (self._n,), dtype=np.float32)

    def observation(self, observation: Any) -> np.ndarray:
        one_hot = np.zeros(self._n, dtype=np.float32)
        one_hot[int(observation) - self._start] = 1.0
        return one_hot


class ShiftedDiscrete(gym.ActionWrapper, RecordConstructorArgs):
    """Actions 0..n-1 for a Discrete space that starts elsewhere."""

    def __init__(self, env: gym.Env) -> None:
        RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        space = env.action_space
        assert isinstance(space, gym.spaces.Discrete)
        self._start = int(space.start)
        self.action_space = gym.spaces.Discrete(int(space.n))

    def action(self, action: Any) -> int:
        return int(action) + self._start


class RepeatAction(gym.Wrapper, RecordConstructorArgs):
    """Each action held for ``repeat`` steps (fewer if the episode ends), rewards summed."""

    def __init__(self, env: gym.Env, repeat: int) -> None:
        RecordConstructorArgs.__init__(self, repeat=repeat)
        gym.Wrapper.__init__(self, env)
        self.repeat = repeat

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        total = 0.0
        for _ in range(self.repeat):
            observation, reward, terminated, truncated, info = self.env.step(action)
            total += float(reward)
            if terminated or truncated:
                break
        return observation, total, terminated, truncated, info


class ImageFrames(gym.Wrapper, RecordConstructorArgs):
    """uint8 images (H, W) or (H, W, C) -> the last ``stack`` frames, grey or RGB, resized
    to ``size`` x ``size`` and stacked channel-first: (stack x C, size, size)."""

    def __init__(self, env: gym.Env, size: int, grayscale: bool, stack: int) -> None:
        RecordConstructorArgs.__init__(self, size=size, grayscale=grayscale, stack=stack)
        gym.Wrapper.__init__(self, env)
        shape = env.observation_space.shape
        assert shape is not None and len(shape) in (2, 3)
        colours = 1 if len(shape) == 2 else min(shape[2], 3)  # alpha is dropped
        self._grey = grayscale and colours == 3
        self._channels = 1 if self._grey else colours
        self._size = size
        self._frames = np.zeros((stack * self._channels, size, size), dtype=np.uint8)
        self.observation_space = gym.spaces.Box(0, 255, self._frames.shape, dtype=np.uint8)

    def _frame(self, image: np.ndarray) -> np.ndarray:
        if image.ndim == 3:
            image = image[..., :3] if image.shape[2] > 1 else image[..., 0]
        if self._grey:
            image = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2GRAY)
        resized = cv2.resize(image, (self._size, self._size), interpolation=cv2.INTER_AREA)
        return resized[None] if resized.ndim == 2 else resized.transpose(2, 0, 1)

    def _push(self, image: np.ndarray) -> np.ndarray:
        c = self._channels
        self._frames[:-c] = self._frames[c:]
        self._frames[-c:] = self._frame(image)
        return self._frames.copy()

    def _fill(self, image: np.ndarray) -> np.ndarray:
        frame = self._frame(image)
        for start in range(0, len(self._frames), self._channels):
            self._frames[start:start + self._channels] = frame
        return self._frames.copy()

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        image, info = self.env.reset(seed=seed, options=options)
        return self._fill(image), info  # as on Atari: the first frame, stack times

    def step(self, action: Any) -> tuple[np.ndarray, Any, bool, bool, dict[str, Any]]:
        image, reward, terminated, truncated, info = self.env.step(action)
        return self._push(image), reward, terminated, truncated, info
