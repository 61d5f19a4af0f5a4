"""A saved run's policy: its config and model, loaded from a run directory or a checkpoint
file, for ``asyncrl-eval`` and ``asyncrl.load``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from torch import nn

from asyncrl.algos import algorithm_class
from asyncrl.algos.configs import is_value_based
from asyncrl.config.saved import typed_config
from asyncrl.envs import env_info
from asyncrl.errors import UserError
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
    env = env_info(cfg.env)  # type: ignore[union-attr]
    model = build_model(cfg, env.observation_space, env.action_space,
                        algorithm_class(cfg.algo.name).head)  # type: ignore[union-attr]
    load_model_weights(model, saved.model, path)
    return cfg, model, saved


def set_evaluation_epsilon(cfg: Any, requested: float | None, name: str) -> float | None:
    """Sets the exploration rate a value-based run is evaluated at: ``requested`` (the
    user's ``name``, refused in one line if it cannot apply) replaces ``cfg.algo.eval_epsilon``
    in place; returns the rate in force, or None for A3C, whose policy is sampled.

    Q-learning learns the greedy policy whatever epsilon its workers explore with, so a
    training score at epsilon 0.1 can sit well below what the same weights play at 0.01:
    evaluating at several rates tells the two apart."""
    if requested is not None:
        if isinstance(requested, bool) or not isinstance(requested, (int, float)):
            raise UserError(f"{name}{requested!r}: give a number in [0, 1]")
        if not 0 <= requested <= 1:
            raise UserError(f"{name}{requested:g}: must lie in [0, 1]")
    if not is_value_based(cfg.algo.name):
        if requested is not None:
            raise UserError(f"{name}{requested:g}: this run's algorithm, {cfg.algo.name}, "
                            f"samples its policy; an epsilon is for the value-based ones")
        return None
    if requested is not None:
        cfg.algo.eval_epsilon = requested
    return float(cfg.algo.eval_epsilon)
