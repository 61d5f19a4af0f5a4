"""The paper's optimizers, written out so their state can live in shared memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from torch import nn

from asyncrl.optim.clipping import clip_grad_norm
from asyncrl.optim.schedule import annealed_lr
from asyncrl.optim.shared_rmsprop import SharedRMSProp

__all__ = ["SharedRMSProp", "annealed_lr", "build_optimizer", "clip_grad_norm"]


def build_optimizer(opt_cfg: Any, params: Iterable[nn.Parameter]) -> SharedRMSProp:
    """The optimizer ``opt_cfg`` names, over the shared model's parameters."""
    if opt_cfg.name == "shared_rmsprop":
        return SharedRMSProp(params, alpha=opt_cfg.alpha, eps=opt_cfg.eps)
    raise ValueError(f"unknown optimizer '{opt_cfg.name}'")
