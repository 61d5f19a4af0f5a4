"""Environment factories: a config node in, a gymnasium.Env out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from asyncrl.envs.family import family_of

if TYPE_CHECKING:  # composing and checking a config need not load gymnasium
    import gymnasium as gym


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
