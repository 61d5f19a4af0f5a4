"""``env=mujoco/<task>``: a gymnasium MuJoCo task from its physical state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omegaconf import MISSING

from asyncrl.envs.family import DomainDefaults, Family
from asyncrl.errors import UserError


@dataclass
class MujocoDefaults(DomainDefaults):
    """The paper's MuJoCo settings (Supp. "Continuous Action Control", Figure S-mujoco)."""

    sweep_lr_low: float = 1e-5
    sweep_lr_high: float = 1e-1


@dataclass
class MujocoEnvConfig(MujocoDefaults):
    """A gymnasium MuJoCo task from its physical state; actions are clipped to the bounds
    for the simulator only (the policy's sample is what the loss sees)."""

    family: str = "mujoco"
    id: str = MISSING
    max_episode_steps: int | None = MISSING
    clip_rewards: bool = MISSING


def make(env: Any, render_mode: str | None, evaluation: bool) -> Any:
    from asyncrl.envs.mujoco import make_mujoco

    return make_mujoco(env.id, env.max_episode_steps, render_mode)


def check_available(env: Any) -> None:
    import gymnasium as gym

    if env.id not in gym.registry:
        raise UserError(f"unknown gymnasium environment id '{env.id}'")
    if "mujoco" not in str(gym.spec(env.id).entry_point):
        raise UserError(f"'{env.id}' is not a gymnasium MuJoCo task")


def check(env: Any) -> None:
    if env.max_episode_steps is not None and env.max_episode_steps < 1:
        raise UserError(f"env.max_episode_steps={env.max_episode_steps}: must be >= 1")


def episode_step_limit(env: Any) -> int | None:
    if env.max_episode_steps is not None:
        return int(env.max_episode_steps)
    import gymnasium as gym

    limit = gym.spec(env.id).max_episode_steps
    return None if limit is None else int(limit)


FAMILY = Family(
    name="mujoco", schema=MujocoEnvConfig, make=make,
    label=lambda env: f"mujoco/{env.id}",
    describe=lambda env: str(env.id),
    observes_images=lambda env: False,
    continuous_actions=lambda env: True,
    episode_step_limit=episode_step_limit,
    check=check, check_available=check_available,
)
