"""Environment families as plug-ins: what the rest of asyncrl needs to know of one.

A family (``atari``, ``gym``, ``maze``, ...) is one module that builds a :class:`Family`
and names it ``FAMILY``, plus its YAML under ``conf/env/``. The config schema, the checks,
the factory and the names in titles and errors all come from that record, so nothing else
branches on ``env.family``. A package outside asyncrl adds a family through the entry-point
group ``asyncrl.env_families`` (``name = "package.module"``) and a YAML of its own.

Family modules import their simulators inside the functions they register: composing a
config or printing a title must not load an emulator.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar

from asyncrl.errors import UserError

if TYPE_CHECKING:
    import gymnasium as gym

BUILT_IN = ("atari", "gym", "mujoco", "mujoco_pixels", "maze", "torcs")
# the smallest screen both conv torsos take: the paper's (8x8/4, 4x4/2) needs 20, the
# Nature DQN's third 3x3 layer (network.conv=nature) needs 36
MIN_SCREEN_SIZE = 36
MAX_SCREEN_SIZE = 512  # past this a worker's frame stacks alone need gigabytes
MAX_FRAME_STACK = 64   # the paper stacks 4; each frame is one more input channel


def check_frame_stack(stack: int) -> None:
    if not 1 <= stack <= MAX_FRAME_STACK:
        raise UserError(f"env.frame_stack={stack}: must lie in [1, {MAX_FRAME_STACK}]")


# agent steps in one episode of a timed game (the maze, TORCS): far past any real one (the
# maze's 60 s are 900 steps); the bound keeps the step count's arithmetic finite
MAX_EPISODE_STEPS = 10**8


def check_episode_steps(keys: str, steps: float) -> None:
    """An episode's clock, ``steps`` agent steps as ``keys`` (their values, for the message)
    give it: from 1 to ``MAX_EPISODE_STEPS``."""
    if not 1 <= steps <= MAX_EPISODE_STEPS:  # NaN and inf fail here too
        raise UserError(f"{keys}: an episode must last from 1 to {MAX_EPISODE_STEPS:,} agent "
                        f"steps; these give {steps:.3g}")


def check_screen_size(size: int) -> None:
    """Refuse a screen the conv torso cannot take, or one no worker has memory for."""
    if not MIN_SCREEN_SIZE <= size <= MAX_SCREEN_SIZE:
        raise UserError(f"env.screen_size={size}: must lie in [{MIN_SCREEN_SIZE}, "
                        f"{MAX_SCREEN_SIZE}] (the conv torso needs at least {MIN_SCREEN_SIZE})")
ENTRY_POINT_GROUP = "asyncrl.env_families"


@dataclass
class DomainDefaults:
    """A domain's run length and sweep range; every family's schema starts from these (the
    sweeps read them). An algorithm's values for a domain live in conf/domain, not here."""

    default_total_frames: int = 40_000_000  # total_frames unless given
    sweep_lr_low: float = 1e-4   # the LogUniform range of +sweep=lr_loguniform (paper, Sec. 5)
    sweep_lr_high: float = 1e-2
    # what a family without these keys does (not keys there; a family with one declares a
    # field of that name): each action acts once, only the game's end is terminal
    frame_skip: ClassVar[int] = 1
    terminal_on_life_loss: ClassVar[bool] = False
    reward_scale: ClassVar[float] = 1.0  # the learner sees the reward as the game gives it


def _nothing(env: Any) -> None:
    return None


def _unknown(env: Any) -> bool | None:
    return None


@dataclass(frozen=True)
class Family:
    """One environment family, as the config checks, the workers and the report see it.

    Every callable takes the family's ``env`` config node.
    """

    name: str
    schema: type[DomainDefaults]
    # a gymnasium.Env from the node; ``evaluation`` asks for the evaluation variant where
    # the family has one (mazes: layouts training never sees)
    make: Callable[[Any, str | None, bool], gym.Env]
    label: Callable[[Any], str]                  # "atari/pong": titles, logs, reports
    continuous_actions: Callable[[Any], bool]
    episode_step_limit: Callable[[Any], int | None]  # agent steps; None: no time limit
    # how a one-line error names the environment; None: by its label
    describe: Callable[[Any], str] | None = None
    # raise UserError for what the user can fix. ``check_available`` runs before the checks
    # of combinations (an unknown id must be named before its action space is asked for, an
    # episode's clock before its length is read); ``check`` runs after them (a missing
    # simulator must not hide a mistake on the command line)
    check: Callable[[Any], None] = _nothing
    check_available: Callable[[Any], None] = _nothing
    # the network chooses discrete or continuous actions (TORCS drives either way)
    network_picks_actions: bool = False
    # whether observations are image stacks (C, H, W); None: not known before one is made
    # (an option for images is then refused when the network is built, not by the checks)
    observes_images: Callable[[Any], bool | None] = _unknown

    def name_in_errors(self, env: Any) -> str:
        return (self.describe or self.label)(env)


@cache
def families() -> dict[str, Family]:
    """Every family: the built-in ones, then those packages register as entry points."""
    found: dict[str, Family] = {}
    modules = [f"asyncrl.envs.families.{name}" for name in BUILT_IN]
    modules += [point.value for point in entry_points(group=ENTRY_POINT_GROUP)]
    for module in modules:
        family = importlib.import_module(module).FAMILY
        if not isinstance(family, Family):
            raise TypeError(f"{module}.FAMILY is not an asyncrl.envs.family.Family")
        if family.name in found:
            raise ValueError(f"two environment families are named '{family.name}'")
        found[family.name] = family
    return found


def family_of(env: Any) -> Family:
    """The family an ``env`` config node belongs to."""
    name = env.family
    family = families().get(name)
    if family is None:
        raise UserError(f"unknown environment family '{name}': one of "
                        f"{', '.join(sorted(families()))}")
    return family


def env_label(env: Any) -> str:
    """``family/what``: how titles, logs and reports name an environment."""
    return family_of(env).label(env)
