"""``env=maze/<level>``: a Labyrinth-like maze drawn from labmaze's generator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omegaconf import MISSING

from asyncrl.envs.family import (
    DomainDefaults,
    Family,
    check_episode_steps,
    check_screen_size,
)
from asyncrl.errors import UserError

MAZE_MAX_SIZE = 101  # cells a side; labmaze takes 32-bit sizes, the paper's mazes are smaller
# the seeds labmaze tells apart: a maze's seed is taken modulo this, and training draws below it
MAZE_SEEDS = 2**31 - 1


@dataclass
class MazeEnvConfig(DomainDefaults):
    """A Labyrinth-like maze level: labmaze's generator settings and the game's clock."""

    family: str = "maze"
    level: str = MISSING
    height: int = MISSING
    width: int = MISSING
    max_rooms: int = MISSING
    room_min_size: int = MISSING
    room_max_size: int = MISSING
    apples_per_room: int = MISSING
    episode_seconds: float = MISSING
    fps: int = MISSING
    frame_skip: int = MISSING
    screen_size: int = MISSING
    eval_seeds: list[int] = MISSING
    clip_rewards: bool = MISSING


def make(env: Any, render_mode: str | None, evaluation: bool) -> Any:
    from asyncrl.envs.maze import LevelSpec, MazeEnv

    spec = LevelSpec(height=env.height, width=env.width, max_rooms=env.max_rooms,
                     room_min_size=env.room_min_size, room_max_size=env.room_max_size,
                     apples_per_room=env.apples_per_room)
    return MazeEnv(spec, episode_seconds=env.episode_seconds, fps=env.fps,
                   frame_skip=env.frame_skip, screen_size=env.screen_size,
                   eval_seeds=tuple(env.eval_seeds), evaluation=evaluation,
                   render_mode=render_mode)


def check(env: Any) -> None:
    for key in ("height", "width"):
        value = getattr(env, key)
        if not 5 <= value <= MAZE_MAX_SIZE or value % 2 == 0:
            raise UserError(f"env.{key}={value}: labmaze needs an odd size in "
                            f"[5, {MAZE_MAX_SIZE}]")
    if not 1 <= env.room_min_size <= env.room_max_size:
        raise UserError(f"env.room_min_size={env.room_min_size} and env.room_max_size="
                        f"{env.room_max_size}: need 1 <= min <= max")
    if not 1 <= env.max_rooms <= MAZE_MAX_SIZE**2:
        raise UserError(f"env.max_rooms={env.max_rooms}: must lie in [1, {MAZE_MAX_SIZE**2}]")
    if not 0 <= env.apples_per_room <= MAZE_MAX_SIZE**2:
        raise UserError(f"env.apples_per_room={env.apples_per_room}: must lie in "
                        f"[0, {MAZE_MAX_SIZE**2}]")
    if not env.eval_seeds:
        raise UserError(f"maze level '{env.level}' names no env.eval_seeds")
    for seed in env.eval_seeds:
        if not 0 <= seed < MAZE_SEEDS:
            raise UserError(f"env.eval_seeds: {seed} is not a maze seed; each must lie in "
                            f"[0, {MAZE_SEEDS:,})")
    check_screen_size(env.screen_size)


def _episode_steps(env: Any) -> float:
    """Agent steps in an episode's ``episode_seconds`` of game time (a fraction)."""
    return env.episode_seconds * env.fps / env.frame_skip


def check_clock(env: Any) -> None:
    """The episode's length, which the checks of combinations read (algo.episode_updates)."""
    if env.frame_skip < 1 or env.fps < 1:
        raise UserError("env.frame_skip and env.fps must be >= 1")
    check_episode_steps(f"env.episode_seconds={env.episode_seconds}, env.fps={env.fps} and "
                        f"env.frame_skip={env.frame_skip}", _episode_steps(env))


FAMILY = Family(
    name="maze", schema=MazeEnvConfig, make=make,
    label=lambda env: f"maze/{env.level}",
    observes_images=lambda env: True,
    continuous_actions=lambda env: False,
    episode_step_limit=lambda env: int(round(_episode_steps(env))),
    check=check, check_available=check_clock,
)
