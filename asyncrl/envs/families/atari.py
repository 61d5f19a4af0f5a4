"""``env=atari/<game>``: an ALE game with the DQN preprocessing the paper used."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omegaconf import MISSING

from asyncrl.envs.family import DomainDefaults, Family, check_frame_stack, check_screen_size
from asyncrl.errors import UserError


@dataclass
class AtariEnvConfig(DomainDefaults):
    """An ALE game with DQN preprocessing."""

    family: str = "atari"
    game: str = MISSING
    frame_skip: int = MISSING
    screen_size: int = MISSING
    frame_stack: int = MISSING
    noop_max: int = MISSING
    repeat_action_probability: float = MISSING
    max_episode_frames: int = MISSING
    terminal_on_life_loss: bool = MISSING
    clip_rewards: bool = MISSING


def make(env: Any, render_mode: str | None, evaluation: bool) -> Any:
    from asyncrl.envs.atari import AtariEnv

    return AtariEnv(game=env.game, frame_skip=env.frame_skip, screen_size=env.screen_size,
                    frame_stack=env.frame_stack, noop_max=env.noop_max,
                    repeat_action_probability=env.repeat_action_probability,
                    max_episode_frames=env.max_episode_frames, render_mode=render_mode)


def check(env: Any) -> None:
    from asyncrl.envs.atari import known_games

    games = known_games()
    if env.game not in games:
        raise UserError(f"unknown Atari game '{env.game}': ale-py knows {len(games)} games, "
                        f"e.g. {', '.join(games[:6])}, ... (see asyncrl.envs.atari.known_games())")
    if env.frame_skip < 1:
        raise UserError(f"env.frame_skip={env.frame_skip}: must be at least 1")
    check_frame_stack(env.frame_stack)
    check_screen_size(env.screen_size)
    if not 0 <= env.repeat_action_probability <= 1:
        raise UserError(f"env.repeat_action_probability={env.repeat_action_probability}: "
                        "must lie in [0, 1]")
    # ALE reads 0 as "no cap", but every episode here needs an end: evaluation, whole-episode
    # updates and the step limit all count on one
    if env.max_episode_frames < env.frame_skip:
        raise UserError(f"env.max_episode_frames={env.max_episode_frames}: must be at least "
                        f"env.frame_skip ({env.frame_skip}), one agent step")
    steps = env.max_episode_frames // env.frame_skip
    if not 0 <= env.noop_max < steps:
        raise UserError(f"env.noop_max={env.noop_max}: must lie in [0, {steps}), fewer "
                        "no-op steps than an episode holds")


FAMILY = Family(
    name="atari", schema=AtariEnvConfig, make=make,
    label=lambda env: f"atari/{env.game}",
    describe=lambda env: str(env.game),
    observes_images=lambda env: True,
    continuous_actions=lambda env: False,
    episode_step_limit=lambda env: int(env.max_episode_frames // env.frame_skip),
    check=check,
)
