"""Typed schemas for every config group.

The YAML files under ``conf/`` hold the values; the dataclasses give each key a type, so a
typo'd key or a wrong type fails when Hydra composes the config. A value a YAML sets is
MISSING here, so it has one home (tests/config/test_config.py holds both ways). The run's,
the networks' and the optimizers' schemas are here; an algorithm's is in
``asyncrl.algos.configs`` and an environment family's comes with the family
(``asyncrl.envs.families``). The checks no type can express are in ``checks.py``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from omegaconf import MISSING, OmegaConf

from asyncrl.algos.configs import ALGORITHM_CONFIGS
from asyncrl.choices import Activation, CentreOn, Conv, TorsoInit
from asyncrl.config.machine import usable_cpus
from asyncrl.envs.family import families

# TrainConfig.workers defaults to ${asyncrl.cpus:}
if not OmegaConf.has_resolver("asyncrl.cpus"):
    OmegaConf.register_new_resolver("asyncrl.cpus", usable_cpus)


@dataclass
class FFNetworkConfig:
    """Feed-forward network: the paper's conv torso for images, an MLP for vectors."""

    name: str = "ff"
    hidden: int = MISSING
    mlp_layers: list[int] = MISSING
    policy_init_scale: float = MISSING
    centre_input: bool = MISSING
    centre_on: CentreOn = MISSING    # images, centre_input=true: mean or background
    mlp_activation: Activation = MISSING
    dueling: bool = MISSING          # Q head as a value stream + mean-subtracted advantages
    spatial_softmax: bool = MISSING  # images: expected (x, y) of each last-conv channel
    conv: Conv = MISSING             # images: the conv layers, paper (2) or nature (3)
    torso_init: TorsoInit = MISSING  # images: lecun_bias or orthogonal


@dataclass
class LSTMNetworkConfig(FFNetworkConfig):
    """The feed-forward torso followed by an LSTM (paper, Section 5.1: 256 cells)."""

    name: str = "lstm"
    lstm_size: int = MISSING


@dataclass
class GaussianNetworkConfig:
    """Separate policy and value nets, each encoder -> LSTM; a spherical Gaussian policy."""

    name: str = "gaussian"
    hidden: int = MISSING
    lstm_size: int = MISSING

    refused: ClassVar[dict[str, str]] = {
        "dueling": "network=gaussian has no Q head to split",
        "spatial_softmax": "network=gaussian's pixel encoder is two linear convs of its own",
        "conv": "network=gaussian's pixel encoder is two linear convs of its own",
        "torso_init": "network=gaussian's encoders keep torch's default init",
        "centre_on": "network=gaussian's pixel encoder reads the pixels as they come",
        "centre_input": "network=gaussian's pixel encoder reads the pixels as they come",
    }


@dataclass
class SharedRMSPropConfig:
    """RMSProp whose squared-gradient statistics g are shared by all workers."""

    name: str = "shared_rmsprop"
    alpha: float = MISSING
    eps: float = MISSING
    initial_square_avg: float = MISSING


@dataclass
class RMSPropConfig(SharedRMSPropConfig):
    """RMSProp with each worker keeping its own statistics g."""

    name: str = "rmsprop"


@dataclass
class MomentumSGDConfig:
    """Momentum SGD with each worker keeping its own momentum m."""

    name: str = "momentum_sgd"
    momentum: float = MISSING

    refused: ClassVar[dict[str, str]] = {
        key: "momentum SGD keeps no squared-gradient statistics"
        for key in ("eps", "initial_square_avg")}


@dataclass
class EvalConfig:
    interval_frames: int = MISSING
    episodes: int = MISSING
    max_episode_frames: int = MISSING
    final_episodes: int = MISSING


@dataclass
class CheckpointConfig:
    interval_frames: int = MISSING
    interval_seconds: float = MISSING
    keep: bool = MISSING


@dataclass
class LogConfig:
    interval_seconds: float = MISSING
    tensorboard: bool = MISSING
    progress: bool = MISSING
    score_window: int = MISSING
    wandb: bool = MISSING
    wandb_project: str = MISSING


@dataclass
class TrainConfig:
    """Top-level schema: one run of one algorithm on one environment."""

    algo: Any = MISSING
    env: Any = MISSING
    network: Any = MISSING
    optimizer: Any = MISSING
    lr: float = MISSING  # conf/config.yaml: the algorithm's default_lr
    workers: int = MISSING
    envs_per_worker: int = MISSING
    minibatches: int = MISSING
    total_frames: int = MISSING  # conf/config.yaml: the environment's default_total_frames
    lr_anneal_frames: int | None = MISSING
    seed: int = MISSING
    serial: bool = MISSING
    resume: str | None = MISSING
    init_from: str | None = MISSING
    objective: str = MISSING
    max_worker_restarts: int = MISSING
    stall_seconds: float = MISSING
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


def keys_of(node: Any) -> set[str]:
    """The keys a config node has: its schema's fields. (A ClassVar on a schema, the fixed
    value of an option that lacks the key, such as Sarsa's ``double_q``, is no key.)"""
    if dataclasses.is_dataclass(node):
        return {f.name for f in dataclasses.fields(node)}
    return set(node.keys())


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
