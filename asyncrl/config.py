"""Typed schemas for every config group, and the checks no type can express.

The YAML files under ``conf/`` hold the values; the dataclasses here give each key a type,
so a typo'd key or a wrong type fails when Hydra composes the config.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import II, MISSING, OmegaConf

from asyncrl.errors import UserError


def usable_cpus() -> int:
    """Cores this process may run on (respects taskset and cgroup affinity)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


if not OmegaConf.has_resolver("asyncrl.cpus"):
    OmegaConf.register_new_resolver("asyncrl.cpus", usable_cpus)


@dataclass
class A3CConfig:
    """Advantage actor-critic (paper, Algorithm S3)."""

    name: str = "a3c"
    gamma: float = 0.99
    t_max: int = 5
    entropy_beta: float = 0.01
    value_loss_coef: float = 0.5
    max_grad_norm: float = 40.0


@dataclass
class AtariEnvConfig:
    """An ALE game with DQN preprocessing."""

    family: str = "atari"
    game: str = MISSING
    frame_skip: int = 4
    screen_size: int = 84
    frame_stack: int = 4
    noop_max: int = 30
    repeat_action_probability: float = 0.0
    max_episode_frames: int = 108_000
    terminal_on_life_loss: bool = True
    clip_rewards: bool = True


@dataclass
class GymEnvConfig:
    """Any registered gymnasium environment with vector observations and discrete actions."""

    family: str = "gym"
    id: str = MISSING
    max_episode_steps: int | None = None
    clip_rewards: bool = False


@dataclass
class FFNetworkConfig:
    """Feed-forward network: the paper's conv torso for images, an MLP for vectors."""

    name: str = "ff"
    hidden: int = 256
    mlp_layers: list[int] = field(default_factory=lambda: [64, 64])


@dataclass
class SharedRMSPropConfig:
    """RMSProp whose squared-gradient statistics g are shared by all workers."""

    name: str = "shared_rmsprop"
    alpha: float = 0.99
    eps: float = 0.1


@dataclass
class EvalConfig:
    interval_frames: int = 1_000_000
    episodes: int = 3
    max_episode_frames: int = 108_000


@dataclass
class CheckpointConfig:
    interval_frames: int = 2_000_000
    interval_seconds: float = 600.0


@dataclass
class LogConfig:
    interval_seconds: float = 2.0
    tensorboard: bool = True
    progress: bool = True
    score_window: int = 20


@dataclass
class TrainConfig:
    """Top-level schema: one run of one algorithm on one environment."""

    algo: Any = MISSING
    env: Any = MISSING
    network: Any = MISSING
    optimizer: Any = MISSING
    lr: float = 7e-4
    workers: int = II("asyncrl.cpus:")
    total_frames: int = 40_000_000
    seed: int = 1
    serial: bool = False
    resume: str | None = None
    max_worker_restarts: int = 3
    stall_seconds: float = 300.0
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    log: LogConfig = field(default_factory=LogConfig)


SCHEMAS: dict[str, dict[str, type]] = {
    "algo": {"a3c": A3CConfig},
    "env": {"atari": AtariEnvConfig, "gym": GymEnvConfig},
    "network": {"ff": FFNetworkConfig},
    "optimizer": {"shared_rmsprop": SharedRMSPropConfig},
}


def register_schemas() -> None:
    """Put every schema in Hydra's ConfigStore under ``schema/<group>/<name>``."""
    cs = ConfigStore.instance()
    cs.store(name="train_schema", node=TrainConfig)
    for group, options in SCHEMAS.items():
        for name, node in options.items():
            cs.store(group=f"schema/{group}", name=name, node=node)


def validate(cfg: Any) -> None:
    """Refuse values that are well-typed but impossible; raise UserError naming the key."""
    if cfg.workers < 1:
        raise UserError(f"workers={cfg.workers}: need at least 1 worker process")
    if cfg.total_frames <= 0:
        raise UserError(f"total_frames={cfg.total_frames}: must be a positive number of frames")
    if not cfg.lr > 0:
        raise UserError(f"lr={cfg.lr}: the learning rate must be positive")
    if cfg.serial and cfg.workers != 1:
        raise UserError(f"serial=true runs one worker in-process; got workers={cfg.workers}")
    if cfg.algo.t_max < 1:
        raise UserError(f"algo.t_max={cfg.algo.t_max}: must be at least 1")
    if not 0 <= cfg.algo.gamma <= 1:
        raise UserError(f"algo.gamma={cfg.algo.gamma}: must lie in [0, 1]")
    if cfg.max_worker_restarts < 0:
        raise UserError("max_worker_restarts must be 0 or more")
    if not cfg.stall_seconds > 0:
        raise UserError(f"stall_seconds={cfg.stall_seconds}: must be positive")
    if cfg.eval.episodes < 0:
        raise UserError("eval.episodes must be 0 or more")
    _validate_env(cfg.env)


def _validate_env(env: Any) -> None:
    if env.family == "atari":
        from asyncrl.envs.atari import known_games

        games = known_games()
        if env.game not in games:
            raise UserError(
                f"unknown Atari game '{env.game}': ale-py knows {len(games)} games, "
                f"e.g. {', '.join(games[:6])}, ... (see asyncrl.envs.atari.known_games())"
            )
        if env.frame_skip < 1 or env.frame_stack < 1 or env.noop_max < 0:
            raise UserError("env.frame_skip and env.frame_stack must be >= 1, env.noop_max >= 0")
    elif env.family == "gym":
        import gymnasium as gym

        if env.id not in gym.registry:
            raise UserError(f"unknown gymnasium environment id '{env.id}'")
    else:
        raise UserError(f"unknown environment family '{env.family}'")


GROUP_KEYS = {"algo": "name", "env": "family", "network": "name", "optimizer": "name"}


def typed_config(data: dict[str, Any]) -> Any:
    """A saved, resolved config (plain dict) back into its typed schemas, for resuming."""
    base = OmegaConf.structured(TrainConfig)
    for group, key in GROUP_KEYS.items():
        node = data.get(group) or {}
        schema = SCHEMAS[group].get(node.get(key, ""))
        if schema is None:
            raise UserError(f"saved config has an unknown {group} '{node.get(key)}'")
        base[group] = OmegaConf.structured(schema)
    return OmegaConf.merge(base, data)
