"""Atari 2600 games through ale-py, with the DQN preprocessing the paper used.

Written directly on ``ALEInterface`` rather than as a stack of gymnasium wrappers: one agent
step here grabs two grey screens, takes their max, resizes once and shifts the frame stack
in place, which is about 1.5x the throughput of the wrapper stack on these machines.

The environment returns whole games and raw rewards. What is for learning only (reward
clipping, a lost life treated as terminal) is left to the learner, which reads
``info["life_lost"]``; so evaluation and the reported scores see the real game.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
from ale_py import Action, ALEInterface, LoggerMode, roms

cv2.setNumThreads(1)  # a worker owns one core; OpenCV's pool would fight the other workers


@cache
def known_games() -> list[str]:
    """Every game id ale-py ships a ROM for (e.g. 'pong', 'space_invaders')."""
    return sorted(roms.get_all_rom_ids())


def _rom_path(game: str) -> str:
    rom = roms.get_rom_path(game)
    if rom is None:
        raise ValueError(f"ale-py has no ROM for '{game}'")
    return str(rom)


@cache
def _game_layout(game: str) -> tuple[tuple[Action, ...], tuple[int, int]]:
    """The game's minimal action set and screen size, read once per process: an environment
    then loads its ROM only at its first reset, with that reset's seed, rather than twice
    (a load is ~80 ms, and a worker with 16 environments builds them all before its first
    frame)."""
    ale = ALEInterface()
    ale.loadROM(_rom_path(game))
    height, width = ale.getScreenDims()
    return tuple(ale.getMinimalActionSet()), (height, width)


class AtariEnv(gym.Env):
    """One ALE game: grey 84x84 frames, max over the last two, a stack of 4, action repeat 4."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 15}

    def __init__(
        self,
        game: str,
        frame_skip: int = 4,
        screen_size: int = 84,
        frame_stack: int = 4,
        noop_max: int = 30,
        repeat_action_probability: float = 0.0,
        max_episode_frames: int = 108_000,
        render_mode: str | None = None,
    ) -> None:
        if game not in known_games():
            raise ValueError(f"unknown Atari game '{game}'")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"unsupported render_mode '{render_mode}'")
        self.game = game
        self.frame_skip = frame_skip
        self.noop_max = noop_max
        self.render_mode = render_mode
        self._size = (screen_size, screen_size)
        self._settings = (repeat_action_probability, max_episode_frames)

        ALEInterface.setLoggerMode(LoggerMode.Error)
        self.ale = ALEInterface()
        self._loaded = False
        self._actions, (height, width) = _game_layout(game)
        self._screens = np.zeros((2, height, width), dtype=np.uint8)
        self._stack = np.zeros((frame_stack, screen_size, screen_size), dtype=np.uint8)
        self._lives = 0

        self.action_space = gym.spaces.Discrete(len(self._actions))
        self.observation_space = gym.spaces.Box(0, 255, self._stack.shape, dtype=np.uint8)

    def _load_rom(self, seed: int) -> None:
        sticky, max_frames = self._settings
        self.ale.setInt("random_seed", int(seed) % (2**31))
        self.ale.setFloat("repeat_action_probability", float(sticky))
        self.ale.setInt("max_num_frames_per_episode", int(max_frames))
        self.ale.loadROM(_rom_path(self.game))  # ALE reads its settings at load time
        self._loaded = True

    def _load_if_never_loaded(self) -> None:
        if not self._loaded:
            self._load_rom(seed=0)

    def action_meanings(self) -> list[str]:
        return [a.name for a in self._actions]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._load_rom(seed=int(self.np_random.integers(2**31)))
        else:
            self._load_if_never_loaded()
        self.ale.reset_game()
        for _ in range(int(self.np_random.integers(0, self.noop_max + 1))):
            self.ale.act(Action.NOOP)
            if self.ale.game_over():
                self.ale.reset_game()
        self.ale.getScreenGrayscale(self._screens[1])
        self._stack[:] = self._downsample(self._screens[1])
        self._lives = self.ale.lives()
        return self._stack.copy(), {"lives": self._lives, "life_lost": False}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        ale_action = self._actions[action]
        reward = 0.0
        last = self.frame_skip - 1
        for k in range(self.frame_skip):
            reward += self.ale.act(ale_action)
            if k == last - 1:
                self.ale.getScreenGrayscale(self._screens[0])
            if self.ale.game_over():
                break
        self.ale.getScreenGrayscale(self._screens[1])
        if k < last - 1 or self.frame_skip == 1:
            self._screens[0] = self._screens[1]  # fewer than two frames were seen this step
        np.maximum(self._screens[0], self._screens[1], out=self._screens[0])

        self._stack[:-1] = self._stack[1:]
        self._stack[-1] = self._downsample(self._screens[0])

        lives = self.ale.lives()
        info = {"lives": lives, "life_lost": lives < self._lives}
        self._lives = lives
        terminated = self.ale.game_over(with_truncation=False)
        truncated = self.ale.game_truncated()
        return self._stack.copy(), reward, terminated, truncated, info

    def _downsample(self, screen: np.ndarray) -> np.ndarray:
        # bilinear, as DQN's rescale; INTER_AREA costs 5x more at this non-integer ratio
        return cv2.resize(screen, self._size, interpolation=cv2.INTER_LINEAR)

    def render(self) -> np.ndarray | None:
        if self.render_mode == "rgb_array":
            self._load_if_never_loaded()
            return self.ale.getScreenRGB()
        return None
