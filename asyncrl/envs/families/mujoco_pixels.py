"""``env=mujoco/pixels/<task>``: a dm_control suite task seen only through a camera."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omegaconf import MISSING

from asyncrl.envs.families.mujoco import MujocoDefaults
from asyncrl.envs.family import Family, check_screen_size
from asyncrl.errors import UserError


@dataclass
class MujocoPixelsEnvConfig(MujocoDefaults):
    """A dm_control suite task seen only through an RGB camera (the paper's pixel tasks)."""

    family: str = "mujoco_pixels"
    domain: str = MISSING
    task: str = MISSING
    camera_id: int = MISSING
    screen_size: int = MISSING
    frame_skip: int = MISSING
    clip_rewards: bool = MISSING


def make(env: Any, render_mode: str | None, evaluation: bool) -> Any:
    from gymnasium.wrappers import ClipAction

    from asyncrl.envs.dm_pixels import DMControlPixels

    return ClipAction(DMControlPixels(env.domain, env.task, env.screen_size, env.camera_id,
                                      env.frame_skip, render_mode))


def check_available(env: Any) -> None:
    from asyncrl.envs.dm_pixels import check_headless_rendering

    check_headless_rendering()  # importing dm_control needs a renderer
    from dm_control import suite

    # before the combination checks, which ask the task for its time limit
    if (env.domain, env.task) not in suite.ALL_TASKS:
        raise UserError(f"dm_control's suite has no task '{env.domain}/{env.task}'")
    if env.frame_skip < 1:
        raise UserError(f"env.frame_skip={env.frame_skip}: must be at least 1")


def check(env: Any) -> None:
    check_screen_size(env.screen_size)
    if env.camera_id < 0:
        raise UserError(f"env.camera_id={env.camera_id}: must be 0 or more")


def episode_step_limit(env: Any) -> int | None:
    from asyncrl.envs.dm_pixels import episode_steps

    return episode_steps(env.domain, env.task, env.frame_skip)


FAMILY = Family(
    name="mujoco_pixels", schema=MujocoPixelsEnvConfig, make=make,
    label=lambda env: f"mujoco_pixels/{env.domain}/{env.task}",
    describe=lambda env: f"{env.domain}/{env.task} from pixels",
    observes_images=lambda env: True,
    continuous_actions=lambda env: True,
    episode_step_limit=episode_step_limit,
    check=check, check_available=check_available,
)
