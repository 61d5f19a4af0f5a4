"""Typed schemas for every config group.

The YAML files under ``conf/`` hold the values; the dataclasses give each key a type, so a
typo'd key or a wrong type fails when Hydra composes the config. The run's, the networks'
and the optimizers' schemas are here; an algorithm's is in ``asyncrl.algos.configs`` and an
environment family's comes with the family (``asyncrl.envs.families``). The checks no type
can express are in ``checks.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from omegaconf import II, MISSING, OmegaConf

from asyncrl.algos.configs import ALGORITHM_CONFIGS
from asyncrl.config.machine import usable_cpus
from asyncrl.envs.family import families

# TrainConfig.workers defaults to ${asyncrl.cpus:}
if not OmegaConf.has_resolver("asyncrl.cpus"):
    OmegaConf.register_new_resolver("asyncrl.cpus", usable_cpus)


@dataclass
class FFNetworkConfig:
    """Feed-forward network: the paper's conv torso for images, an MLP for vectors."""

    name: str = "ff"
    hidden: int = 256
    mlp_layers: list[int] = field(default_factory=lambda: [64, 64])
    policy_init_scale: float = 1.0
    centre_input: bool = True
    mlp_activation: str = "tanh"
    dueling: bool = False          # Q head as a value stream + mean-subtracted advantages
    spatial_softmax: bool = False  # images: expected (x, y) of each last-conv channel


@dataclass
class LSTMNetworkConfig(FFNetworkConfig):
    """The feed-forward torso followed by an LSTM (paper, Section 5.1: 256 cells)."""

    name: str = "lstm"
    lstm_size: int = 256


@dataclass
class GaussianNetworkConfig:
    """Separate policy and value nets, each encoder -> LSTM; a spherical Gaussian policy."""

    name: str = "gaussian"
    hidden: int = 200
    lstm_size: int = 128

    refused: ClassVar[dict[str, str]] = {
        "dueling": "network=gaussian has no Q head to split",
        "spatial_softmax": "network=gaussian's pixel encoder is two linear convs of its own",
    }


@dataclass
class SharedRMSPropConfig:
    """RMSProp whose squared-gradient statistics g are shared by all workers."""

    name: str = "shared_rmsprop"
    alpha: float = 0.99
    eps: float = 0.1
    initial_square_avg: float = 0.0


@dataclass
class RMSPropConfig(SharedRMSPropConfig):
    """RMSProp with each worker keeping its own statistics g."""

    name: str = "rmsprop"


@dataclass
class MomentumSGDConfig:
    """Momentum SGD with each worker keeping its own momentum m."""

    name: str = "momentum_sgd"
    momentum: float = 0.99


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
    wandb: bool = False
    wandb_project: str = "asyncrl"


@dataclass
class TrainConfig:
    """Top-level schema: one run of one algorithm on one environment."""

    algo: Any = MISSING
    env: Any = MISSING
    network: Any = MISSING
    optimizer: Any = MISSING
    lr: float = MISSING  # conf/config.yaml: the algorithm's default_lr
    workers: int = II("asyncrl.cpus:")
    envs_per_worker: int = 1
    total_frames: int = MISSING  # conf/config.yaml: the environment's default_total_frames
    lr_anneal_frames: int | None = None
    seed: int = 1
    serial: bool = False
    resume: str | None = None
    objective: str = "train_score"
    max_worker_restarts: int = 3
    stall_seconds: float = 300.0
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    log: LogConfig = field(default_factory=LogConfig)


SCHEMAS: dict[str, dict[str, type]] = {
    "algo": ALGORITHM_CONFIGS,
    "env": {name: family.schema for name, family in families().items()},
    "network": {"ff": FFNetworkConfig, "lstm": LSTMNetworkConfig,
                "gaussian": GaussianNetworkConfig},
    "optimizer": {"shared_rmsprop": SharedRMSPropConfig, "rmsprop": RMSPropConfig,
                  "momentum_sgd": MomentumSGDConfig},
}


# a refusal's reason (a schema's ``refused``) is also the reason for the key's companions
COMPANIONS = {"replay_ratio": "replay_capacity"}


def refusal(schema_name: str, key: str) -> str | None:
    """Why the option whose schema class is ``schema_name`` does not take ``key``, a key of
    another option of its group, where the schema says (``refused``)."""
    for group, options in SCHEMAS.items():
        for option, schema in options.items():
            reasons: dict[str, str] = getattr(schema, "refused", {})
            reason = reasons.get(COMPANIONS.get(key, key))
            if schema.__name__ == schema_name and reason:
                return f"{group}.{key} is not a key of {group}={option}: {reason}"
    return None
