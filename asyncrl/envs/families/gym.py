"""``env=gym env.id=<id>``: any gymnasium environment, as the networks can take it.

Actions: ``Discrete`` (a softmax policy or one Q-value each) or a ``Box`` vector (the
Gaussian policy; clipped to the bounds for the simulator only). Observations: a ``Box``
vector (as float32), a ``Discrete`` state (one-hot), or a uint8 image of shape (H, W) or
(H, W, C), which gets the Atari treatment: grey, resized to a square, the last few stacked
channel-first. Anything else is refused in one line when the config is checked, before a
worker starts; so is an id gymnasium does not know. ``module:Id`` imports ``module``
first (gymnasium's own syntax), and ``ALE/...`` ids load ale-py's registrations.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from omegaconf import MISSING, OmegaConf

from asyncrl.envs.family import DomainDefaults, Family, check_frame_stack, check_screen_size
from asyncrl.errors import UserError

IMAGE_CHANNELS = (1, 3, 4)  # grey, RGB, RGBA (alpha is dropped)


@dataclass
class GymEnvConfig(DomainDefaults):
    """Any registered gymnasium environment (see the module's docstring for the spaces)."""

    family: str = "gym"
    id: str = MISSING
    kwargs: dict[str, Any] = MISSING  # for gymnasium.make
    max_episode_steps: int | None = MISSING  # null: the registered limit
    frame_skip: int = MISSING         # each action is repeated this many steps, rewards summed
    clip_rewards: bool = MISSING  # for learning only: rewards clipped to [-1, 1]
    grayscale: bool = MISSING      # image observations only, like the next two
    screen_size: int = MISSING
    frame_stack: int = MISSING


def _kwargs(env: Any) -> dict[str, Any]:
    kwargs = OmegaConf.to_container(env.kwargs) if OmegaConf.is_config(env.kwargs) \
        else dict(env.kwargs)
    assert isinstance(kwargs, dict)
    return {str(k): v for k, v in kwargs.items()}


def _load_registrations(env_id: str) -> str:
    """Import what registers ``env_id``; return the id gymnasium's registry knows."""
    module, _, name = env_id.rpartition(":")
    try:
        if module:
            importlib.import_module(module)
        elif name.startswith("ALE/"):
            importlib.import_module("ale_py")
    except ImportError as exc:
        raise UserError(f"env.id={env_id}: cannot import '{exc.name or module}' "
                        f"({exc})") from None
    return name


def _make_raw(env_id: str, kwargs: dict[str, Any], max_episode_steps: int | None,
              render_mode: str | None = None) -> Any:
    import gymnasium as gym

    name = _load_registrations(env_id)
    if max_episode_steps is not None:
        kwargs = {**kwargs, "max_episode_steps": int(max_episode_steps)}
    try:
        return gym.make(name, render_mode=render_mode, **kwargs)
    except (gym.error.UnregisteredEnv, gym.error.DeprecatedEnv) as exc:
        raise UserError(f"unknown gymnasium environment id '{env_id}': {exc}") from None
    except gym.error.Error as exc:  # a missing extra (Box2D, ...), a bad render mode, ...
        raise UserError(f"env.id={env_id}: {exc}") from None
    except TypeError as exc:  # a keyword the environment does not take
        raise UserError(f"env.id={env_id} with env.kwargs={kwargs}: {exc}") from None


def observation_kind(space: Any) -> str:
    """``vector``, ``one_hot`` or ``image``; UserError for a space no network takes."""
    import gymnasium as gym

    if isinstance(space, gym.spaces.Discrete):
        return "one_hot"
    if isinstance(space, gym.spaces.Box):
        shape = space.shape
        if len(shape) == 1:
            return "vector"
        image = len(shape) == 2 or (len(shape) == 3 and shape[2] in IMAGE_CHANNELS)
        if image and space.dtype == np.uint8:
            return "image"
    raise UserError(f"observation space {space} is not supported: asyncrl takes a Box vector, "
                    "a Discrete state, or a uint8 image Box of shape (H, W) or (H, W, C)")


def action_kind(space: Any) -> str:
    """``discrete`` or ``continuous``; UserError for a space no policy draws from."""
    import gymnasium as gym

    if isinstance(space, gym.spaces.Discrete):
        return "discrete"
    if isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
        return "continuous"
    raise UserError(f"action space {space} is not supported: asyncrl takes Discrete actions "
                    "or a Box vector of continuous ones")


@cache
def _spaces(env_id: str, kwargs_json: str, max_steps: int | None) -> tuple[str, str, int | None]:
    """(observation kind, action kind, step limit), from one environment made and closed."""
    import gymnasium as gym

    raw = _make_raw(env_id, json.loads(kwargs_json), max_steps)
    try:
        where = f"env.id={env_id}"
        try:
            kinds = observation_kind(raw.observation_space), action_kind(raw.action_space)
        except UserError as exc:
            raise UserError(f"{where}: {exc}") from None
        spec: gym.envs.registration.EnvSpec | None = raw.spec
        limit = None if spec is None else spec.max_episode_steps
        return kinds[0], kinds[1], limit
    finally:
        raw.close()


def _described(env: Any) -> tuple[str, str, int | None]:
    return _spaces(str(env.id), json.dumps(_kwargs(env), sort_keys=True), env.max_episode_steps)


def check_available(env: Any) -> None:
    if env.frame_skip < 1:
        raise UserError(f"env.frame_skip={env.frame_skip}: must be at least 1")
    if env.max_episode_steps is not None and env.max_episode_steps < 1:
        raise UserError(f"env.max_episode_steps={env.max_episode_steps}: must be >= 1")
    _described(env)  # an unknown id or a missing package, named before anything else
    # checked for vector observations too, where they go unread: a bad value is a typo
    check_screen_size(env.screen_size)
    check_frame_stack(env.frame_stack)


def episode_step_limit(env: Any) -> int | None:
    limit = _described(env)[2]
    return None if limit is None else -(-int(limit) // int(env.frame_skip))


def make(env: Any, render_mode: str | None, evaluation: bool) -> Any:
    from gymnasium.wrappers import ClipAction

    from asyncrl.envs.gym_wrappers import (
        ImageFrames,
        OneHotState,
        RepeatAction,
        ShiftedDiscrete,
        VectorState,
    )

    made = _make_raw(str(env.id), _kwargs(env), env.max_episode_steps, render_mode)
    observation, actions = observation_kind(made.observation_space), \
        action_kind(made.action_space)
    if actions == "continuous":
        made = ClipAction(made)
    elif made.action_space.start != 0:
        made = ShiftedDiscrete(made)
    if env.frame_skip > 1:
        made = RepeatAction(made, int(env.frame_skip))
    if observation == "image":
        return ImageFrames(made, int(env.screen_size), bool(env.grayscale),
                           int(env.frame_stack))
    return OneHotState(made) if observation == "one_hot" else VectorState(made)


FAMILY = Family(
    name="gym", schema=GymEnvConfig, make=make,
    label=lambda env: f"gym/{env.id}",
    describe=lambda env: str(env.id),
    continuous_actions=lambda env: _described(env)[1] == "continuous",
    observes_images=lambda env: _described(env)[0] == "image",
    episode_step_limit=episode_step_limit,
    check_available=check_available,
)
