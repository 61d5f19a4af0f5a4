"""Environment factories: a config node in, a gymnasium.Env out."""

from __future__ import annotations

from typing import Any

import gymnasium as gym


def make_env(env_cfg: Any, render_mode: str | None = None, evaluation: bool = False) -> gym.Env:
    """Build the environment an ``env`` config node describes.

    ``evaluation`` asks for the evaluation variant where a domain has one (mazes: the
    fixed evaluation layouts that training never sees)."""
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
    if env_cfg.family == "mujoco":
        from asyncrl.envs.mujoco import make_mujoco

        return make_mujoco(env_cfg.id, env_cfg.max_episode_steps, render_mode)
    if env_cfg.family == "mujoco_pixels":
        from gymnasium.wrappers import ClipAction

        from asyncrl.envs.dm_pixels import DMControlPixels

        return ClipAction(DMControlPixels(env_cfg.domain, env_cfg.task, env_cfg.screen_size,
                                          env_cfg.camera_id, env_cfg.frame_skip, render_mode))
    if env_cfg.family == "maze":
        from asyncrl.envs.maze import LevelSpec, MazeEnv

        spec = LevelSpec(height=env_cfg.height, width=env_cfg.width,
                         max_rooms=env_cfg.max_rooms, room_min_size=env_cfg.room_min_size,
                         room_max_size=env_cfg.room_max_size,
                         apples_per_room=env_cfg.apples_per_room)
        return MazeEnv(spec, episode_seconds=env_cfg.episode_seconds, fps=env_cfg.fps,
                       frame_skip=env_cfg.frame_skip, screen_size=env_cfg.screen_size,
                       eval_seeds=tuple(env_cfg.eval_seeds), evaluation=evaluation,
                       render_mode=render_mode)
    if env_cfg.family == "torcs":
        from asyncrl.envs.torcs.settings import make_torcs

        return make_torcs(env_cfg, render_mode)
    raise ValueError(f"unknown environment family '{env_cfg.family}'")


def episode_step_limit(env: gym.Env) -> int:
    """The agent steps after which the environment cuts an episode (whole-episode updates
    size their buffers by it)."""
    limit = getattr(env.unwrapped, "max_steps", None)
    if limit is None and env.spec is not None:
        limit = env.spec.max_episode_steps
    if limit is None:
        raise ValueError(f"{env} has no time limit; whole-episode updates need one")
    return int(limit)


def frames_per_step(env_cfg: Any) -> int:
    """Emulator frames one agent step consumes (the paper counts frames, not steps)."""
    return int(getattr(env_cfg, "frame_skip", 1))


def learning_terminal(env_cfg: Any, terminated: bool, info: dict[str, Any]) -> bool:
    """Whether the learner should bootstrap 0 after this step."""
    if terminated:
        return True
    return bool(getattr(env_cfg, "terminal_on_life_loss", False) and info.get("life_lost"))
