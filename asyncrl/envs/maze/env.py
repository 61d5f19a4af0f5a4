"""A Labyrinth-like task: find apples and the portal in a new random 3D maze each episode.

Paper, Section 5.4: apples give 1, the portal gives 10, respawns the agent at a random
place and brings every apple back; an episode lasts 60 seconds. Here game time runs at
60 frames per second and every action is repeated for 4 frames, so an episode is
60 * 60 / 4 = 900 agent steps (both rates are config keys).

Observations are (3, 84, 84) uint8 RGB, channels first like the Atari stacks, so the same
conv torso reads them. Training draws a fresh maze seed every episode and never the seeds
in ``eval_seeds``; an evaluation env cycles through exactly those.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from asyncrl.envs.maze.layout import Layout, LevelSpec, generate
from asyncrl.envs.maze.physics import clear, walk
from asyncrl.envs.maze.raycast import APPLE_KIND, PORTAL_KIND, render_view

# (forward, strafe right, turn right) per action; turning is in units of TURN
ACTIONS = (
    ("forward", 1.0, 0.0, 0.0),
    ("backward", -1.0, 0.0, 0.0),
    ("strafe_left", 0.0, -1.0, 0.0),
    ("strafe_right", 0.0, 1.0, 0.0),
    ("turn_left", 0.0, 0.0, -1.0),
    ("turn_right", 0.0, 0.0, 1.0),
    ("forward_turn_left", 1.0, 0.0, -1.0),
    ("forward_turn_right", 1.0, 0.0, 1.0),
)
MOVE_PER_FRAME = 0.05            # cells per game frame walking (3 cells/s at 60 fps)
TURN_PER_FRAME = math.radians(4)  # 240 degrees/s
RADIUS = 0.2                     # the agent's body, in cells: it cannot touch walls
REACH = 0.45                     # how close the agent's centre must come to take an object
APPLE_REWARD, PORTAL_REWARD = 1.0, 10.0
FOV = math.radians(60)


class MazeEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 15}

    def __init__(self, level: LevelSpec, episode_seconds: float = 60.0, fps: int = 60,
                 frame_skip: int = 4, screen_size: int = 84,
                 eval_seeds: tuple[int, ...] = (), evaluation: bool = False,
                 render_mode: str | None = None) -> None:
        self.level = level
        self.frame_skip = frame_skip
        self.max_steps = int(round(episode_seconds * fps / frame_skip))
        self.eval_seeds = tuple(int(s) for s in eval_seeds)
        self.evaluation = evaluation
        if evaluation and not self.eval_seeds:
            raise ValueError("an evaluation maze env needs eval_seeds")
        self.render_mode = render_mode
        self.observation_space = gym.spaces.Box(0, 255, (3, screen_size, screen_size), np.uint8)
        self.action_space = gym.spaces.Discrete(len(ACTIONS))
        self._screen = np.zeros((screen_size, screen_size, 3), dtype=np.uint8)
        self._eval_index = 0
        self.layout: Layout | None = None
        self.path: list[tuple[float, float]] = []

    # -- episode -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.maze_seed = self._next_maze_seed()
        self.layout = generate(self.level, self.maze_seed)
        apples, portal = self.layout.apples, self.layout.portal
        # the sprites the view draws: every apple, then the portal, which is always there
        self._sprite_x = np.append(apples[:, 0], portal[0])
        self._sprite_y = np.append(apples[:, 1], portal[1])
        self._sprite_kind = np.append(np.full(len(apples), APPLE_KIND, np.int64), PORTAL_KIND)
        self._sprite_on = np.ones(len(apples) + 1, dtype=np.bool_)
        self.apple_on = self._sprite_on[:-1]  # a view: taking an apple hides its sprite
        self.steps = 0
        self.apples_eaten = 0
        self.portals_entered = 0
        self._spawn()
        self.path = [(self.x, self.y)]
        return self._observe(), self._info()

    def _next_maze_seed(self) -> int:
        if self.evaluation:
            seed = self.eval_seeds[self._eval_index % len(self.eval_seeds)]
            self._eval_index += 1
            return seed
        while True:
            seed = int(self.np_random.integers(2**31 - 1))
            if seed not in self.eval_seeds:
                return seed

    def _spawn(self) -> None:
        assert self.layout is not None
        spawns = self.layout.spawns
        x, y = spawns[int(self.np_random.integers(len(spawns)))]
        self.x, self.y = float(x), float(y)
        self.angle = float(self.np_random.uniform(0.0, 2 * math.pi))

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        assert self.layout is not None, "call reset() before step()"
        _, forward, strafe, turn = ACTIONS[int(action)]
        portal = self.layout.portal
        self.x, self.y, self.angle, taken, entered = walk(
            self.layout.walls, self.x, self.y, self.angle, forward, strafe, turn,
            self.frame_skip, MOVE_PER_FRAME, TURN_PER_FRAME, RADIUS, REACH,
            self.layout.apples, self.apple_on, float(portal[0]), float(portal[1]))
        reward = APPLE_REWARD * taken
        self.apples_eaten += taken
        if entered:  # the rest of the action is lost: the agent starts still at its new place
            reward += PORTAL_REWARD
            self.portals_entered += 1
            self.apple_on[:] = True
            self._spawn()
        self.steps += 1
        self.path.append((self.x, self.y))
        truncated = self.steps >= self.max_steps
        return self._observe(), reward, False, truncated, self._info()

    def _clear(self, x: float, y: float) -> bool:
        assert self.layout is not None
        return bool(clear(self.layout.walls, x, y, RADIUS))

    # -- pictures ----------------------------------------------------------------------
    def _observe(self) -> np.ndarray:
        assert self.layout is not None
        render_view(self.layout.walls, self.layout.wall_colour, self.x, self.y, self.angle,
                    self._sprite_x, self._sprite_y, self._sprite_kind, self._sprite_on,
                    math.tan(FOV / 2), self._screen)
        return np.ascontiguousarray(self._screen.transpose(2, 0, 1))

    def _info(self) -> dict[str, Any]:
        return {"maze_seed": self.maze_seed, "apples_eaten": self.apples_eaten,
                "portals_entered": self.portals_entered}

    def render(self) -> np.ndarray | None:
        """The first-person view beside a top-down map with the path so far."""
        if self.render_mode != "rgb_array":
            return None
        from asyncrl.envs.maze.view import side_by_side

        return side_by_side(self)
