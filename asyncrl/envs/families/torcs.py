"""``env=torcs/<setting>``: a TORCS race seen as an 84x84 RGB view."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omegaconf import II, MISSING

from asyncrl.envs.family import DomainDefaults, Family


@dataclass
class TorcsEnvConfig(DomainDefaults):
    """A TORCS race seen as an 84x84 RGB view; a frame is one of TORCS's 50 Hz driver calls."""

    family: str = "torcs"
    setting: str = MISSING
    track: str = MISSING
    track_category: str = MISSING
    car: str = MISSING
    opponents: list[str] = MISSING  # TORCS robots as module/index
    laps: int = MISSING
    max_episode_seconds: float = MISSING
    frame_skip: int = MISSING
    screen_size: int = MISSING
    off_track_margin: float = 1.0
    stuck_seconds: float = 3.0
    stuck_speed: float = 1.0
    steer_levels: list[float] = MISSING
    pedal_levels: list[float] = MISSING
    policy_network: str = II("network.name")  # gaussian: continuous actions, else discrete
    reward_scale: float = MISSING
    clip_rewards: bool = MISSING


def make(env: Any, render_mode: str | None, evaluation: bool) -> Any:
    from asyncrl.envs.torcs.settings import make_torcs

    return make_torcs(env, render_mode)


def check(env: Any) -> None:
    from asyncrl.envs.torcs.settings import validate_torcs

    validate_torcs(env)


def check_clock(env: Any) -> None:
    from asyncrl.envs.torcs.settings import check_clock as check_torcs_clock

    check_torcs_clock(env)


def episode_step_limit(env: Any) -> int | None:
    from asyncrl.envs.torcs.controls import episode_step_limit as limit

    return limit(env.max_episode_seconds, env.frame_skip)


FAMILY = Family(
    name="torcs", schema=TorcsEnvConfig, make=make,
    label=lambda env: f"torcs/{env.setting}",
    observes_images=lambda env: True,
    continuous_actions=lambda env: bool(env.policy_network == "gaussian"),
    episode_step_limit=episode_step_limit,
    check=check, check_available=check_clock, network_picks_actions=True,
)
