"""Environment factories: a config node in, a gymnasium.Env out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asyncrl.envs.family import family_of

if TYPE_CHECKING:  # composing and checking a config need not load gymnasium
    import gymnasium as gym


@dataclass(frozen=True)
class EnvInfo:
    """What the model is built for: an environment's spaces, read once per run (making an
    environment can start an emulator or a TORCS process) and passed on."""

    observation_space: gym.Space
    action_space: gym.Space


def env_info(env_cfg: Any) -> EnvInfo:
    """The spaces of the environment ``env_cfg`` describes, from one environment made and
    closed."""
    env = make_env(env_cfg)
    try:
        return EnvInfo(env.observation_space, env.action_space)
    finally:
        env.close()


def make_env(env_cfg: Any, render_mode: str | None = None, evaluation: bool = False) -> gym.Env:
    """Build the environment an ``env`` config node describes, through its family.

    ``evaluation`` asks for the evaluation variant where a domain has one (mazes: the
    fixed evaluation layouts that training never sees)."""
    return family_of(env_cfg).make(env_cfg, render_mode, evaluation)


def frames_per_step(env_cfg: Any) -> int:
    """Emulator frames one agent step consumes (the paper counts frames, not steps)."""
    return int(env_cfg.frame_skip)


def learning_terminal(env_cfg: Any, terminated: bool, info: dict[str, Any]) -> bool:
    """Whether the learner should bootstrap 0 after this step."""
    if terminated:
        return True
    return bool(env_cfg.terminal_on_life_loss and info.get("life_lost"))
