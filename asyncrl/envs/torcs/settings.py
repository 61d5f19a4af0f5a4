"""From an ``env=torcs/<setting>`` config node to a race, with the checks that need TORCS's
data directory (the track, the cars and the robots named must exist)."""

from __future__ import annotations

from typing import Any

from asyncrl.envs.family import check_episode_steps, check_screen_size
from asyncrl.envs.torcs.controls import race_steps
from asyncrl.envs.torcs.paths import DATA_DIR, require_torcs
from asyncrl.envs.torcs.race import Opponent, RaceSpec
from asyncrl.errors import UserError


def race_spec(env: Any) -> RaceSpec:
    return RaceSpec(track=env.track, category=env.track_category, car=env.car,
                    opponents=tuple(env.opponents), laps=int(env.laps))


def check_clock(env: Any) -> None:
    """The episode's length, which the checks of combinations read (algo.episode_updates)."""
    if env.frame_skip < 1:
        raise UserError("env.frame_skip must be >= 1")
    check_episode_steps(f"env.max_episode_seconds={env.max_episode_seconds} and "
                        f"env.frame_skip={env.frame_skip}",
                        race_steps(env.max_episode_seconds, env.frame_skip))


def validate_torcs(env: Any) -> None:
    """Refuse impossible settings first, then a missing TORCS, then names TORCS lacks."""
    if env.laps < 1:
        raise UserError("env.laps must be >= 1")
    check_screen_size(env.screen_size)
    if not env.steer_levels or not env.pedal_levels:
        raise UserError("env.steer_levels and env.pedal_levels must each name at least one value")
    if any(not -1 <= v <= 1 for v in [*env.steer_levels, *env.pedal_levels]):
        raise UserError("env.steer_levels and env.pedal_levels must lie in [-1, 1]")
    try:
        bots = {text: Opponent.parse(text) for text in env.opponents}
    except ValueError as exc:
        raise UserError(str(exc)) from None
    paths = require_torcs()
    track = DATA_DIR / "tracks" / env.track_category / env.track
    if not track.is_dir():
        raise UserError(f"TORCS has no {env.track_category} track '{env.track}' "
                        f"(tracks are under {DATA_DIR / 'tracks'})")
    if not (DATA_DIR / "cars" / env.car).is_dir():
        raise UserError(f"TORCS has no car '{env.car}' (cars are under {DATA_DIR / 'cars'})")
    for text, bot in bots.items():
        if not (paths.modules / "drivers" / bot.module / f"{bot.module}.so").exists():
            raise UserError(f"TORCS has no robot module '{bot.module}' for opponent '{text}'")


def make_torcs(env: Any, render_mode: str | None = None) -> Any:
    from asyncrl.envs.torcs.env import TorcsEnv

    return TorcsEnv(race_spec(env), continuous=env.policy_network == "gaussian",
                    frame_skip=env.frame_skip, screen_size=env.screen_size,
                    max_episode_seconds=env.max_episode_seconds,
                    off_track_margin=env.off_track_margin, stuck_seconds=env.stuck_seconds,
                    stuck_speed=env.stuck_speed, steer_levels=tuple(env.steer_levels),
                    pedal_levels=tuple(env.pedal_levels), render_mode=render_mode)
