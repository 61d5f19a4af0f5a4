"""A saved run's policy: its config and model, loaded from a run directory or a checkpoint
file, for ``asyncrl-eval`` and ``asyncrl.load``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from torch import nn

from asyncrl.algos import algorithm_class
from asyncrl.config.saved import typed_config
from asyncrl.envs import make_env
from asyncrl.nets import build_model
from asyncrl.run_files.checkpoint import (
    Checkpoint,
    checkpoint_source,
    load_checkpoint,
    load_model_weights,
)


def load_policy(source: Path) -> tuple[Any, nn.Module, Checkpoint]:
    """Config and model of a run directory or a checkpoint file, and the checkpoint."""
    path, _ = checkpoint_source(source)
    saved = load_checkpoint(path)
    cfg = OmegaConf.to_object(typed_config(saved.config))
    env = make_env(cfg.env)  # type: ignore[union-attr]
    model = build_model(cfg, env.observation_space, env.action_space,
                        algorithm_class(cfg.algo.name).head)  # type: ignore[union-attr]
    load_model_weights(model, saved.model, path)
    env.close()
    return cfg, model, saved
