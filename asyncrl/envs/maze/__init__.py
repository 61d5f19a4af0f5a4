"""The Labyrinth-like maze domain: labmaze layouts, a raycast first-person view, the task."""

from asyncrl.envs.maze.env import ACTIONS, MazeEnv
from asyncrl.envs.maze.layout import LevelSpec

__all__ = ["ACTIONS", "LevelSpec", "MazeEnv"]
