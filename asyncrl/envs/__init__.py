"""Environment factories: a config node in, a gymnasium.Env out."""

from __future__ import annotations

from typing import Any

import gymnasium as gym


def make_env(env_cfg: Any, render_mode: str | None = None) -> gym.Env:
    """Build the environment an ``env`` config node describes."""
    if env_cfg.family == "atari":
        from asyncrl.envs.atari import AtariEnv

        return AtariEnv(
            game=env_cfg.game,
            frame_skip=env_cfg.frame_skip,
            screen_size=env_cfg.screen_size,
            frame_stack=env_cfg.frame_stack,
            noop_max=env_cfg.noop_max,
            repeat_action_probability=env_cfg.repeat_action_probability,
            max_episode_frames=env_cfg.max_episode_frames,
            render_mode=render_mode,
        )
    if env_cfg.family == "gym":
        kwargs: dict[str, Any] = {"render_mode": render_mode}
        if env_cfg.max_episode_steps is not None:
            kwargs["max_episode_steps"] = env_cfg.max_episode_steps
        return gym.make(env_cfg.id, **kwargs)
    raise ValueError(f"unknown environment family '{env_cfg.family}'")


def frames_per_step(env_cfg: Any) -> int:
    """Emulator frames one agent step consumes (the paper counts frames, not steps)."""
    return int(getattr(env_cfg, "frame_skip", 1))


def learning_terminal(env_cfg: Any, terminated: bool, info: dict[str, Any]) -> bool:
    """Whether the learner should bootstrap 0 after this step."""
    if terminated:
        return True
    return bool(getattr(env_cfg, "terminal_on_life_loss", False) and info.get("life_lost"))
