"""Small gymnasium environments with the spaces ``env=gym`` must take or refuse.

Importing the module registers them, so ``env.id=tests.gym_test_envs:TinyImage-v0`` works
in worker processes too (gymnasium's ``module:id`` syntax).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

HEIGHT, WIDTH = 48, 64
EPISODE_STEPS = 20


class TinyImage(gym.Env):
    """RGB frames whose brightness counts the steps; actions -1, 0, 1 (Discrete(3, start=-1));
    reward 1 for action 1, the start of the space + 2."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, channels: int = 3, render_mode: str | None = None) -> None:
        self.observation_space = gym.spaces.Box(0, 255, (HEIGHT, WIDTH, channels), np.uint8)
        self.action_space = gym.spaces.Discrete(3, start=-1)
        self.render_mode = render_mode
        self.steps = 0
        self.actions: list[int] = []

    def _frame(self) -> np.ndarray:
        frame = np.full(self.observation_space.shape, 10 * self.steps, dtype=np.uint8)
        frame[..., 0] = 200  # a red tint: grey differs from the plain mean of the channels
        return frame

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.steps = 0
        return self._frame(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        assert self.action_space.contains(action), action
        self.actions.append(int(action))
        self.steps += 1
        return self._frame(), float(action == 1), self.steps >= EPISODE_STEPS, False, {}

    def render(self) -> np.ndarray:
        return self._frame()


class CueImage(gym.Env):
    """Each frame shows one of three cues, a bright band in the left, middle or right third;
    the action equal to the cue earns 1. A policy must read the image to beat a random
    one's 20 / 3 per episode."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, render_mode: str | None = None) -> None:
        self.observation_space = gym.spaces.Box(0, 255, (HEIGHT, WIDTH, 3), np.uint8)
        self.action_space = gym.spaces.Discrete(3)
        self.render_mode = render_mode
        self.steps, self.cue = 0, 0

    def _frame(self) -> np.ndarray:
        frame = np.zeros(self.observation_space.shape, dtype=np.uint8)
        third = WIDTH // 3
        frame[:, self.cue * third:(self.cue + 1) * third] = 255
        return frame

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.steps, self.cue = 0, int(self.np_random.integers(3))
        return self._frame(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        reward = float(int(action) == self.cue)
        self.steps += 1
        self.cue = int(self.np_random.integers(3))
        return self._frame(), reward, self.steps >= EPISODE_STEPS, False, {}

    def render(self) -> np.ndarray:
        return self._frame()


class FloatImage(TinyImage):
    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(render_mode=render_mode)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (HEIGHT, WIDTH, 3), np.float32)


class ManyButtons(TinyImage):
    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(render_mode=render_mode)
        self.action_space = gym.spaces.MultiDiscrete([2, 2])


for name, cls in (("TinyImage-v0", TinyImage), ("CueImage-v0", CueImage),
                  ("FloatImage-v0", FloatImage),
                  ("ManyButtons-v0", ManyButtons)):
    if name not in gym.registry:
        gym.register(id=name, entry_point=cls)
