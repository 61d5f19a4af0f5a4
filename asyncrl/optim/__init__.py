"""The paper's optimizers, written out so their state can live in shared memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from torch import nn

from asyncrl.optim.base import AsyncOptimizer
from asyncrl.optim.clipping import clip_grad_norm
from asyncrl.optim.momentum_sgd import MomentumSGD
from asyncrl.optim.schedule import annealed_lr
from asyncrl.optim.shared_rmsprop import RMSProp, SharedRMSProp

__all__ = ["AsyncOptimizer", "MomentumSGD", "RMSProp", "SharedRMSProp", "annealed_lr",
           "build_optimizer", "clip_grad_norm"]


def build_optimizer(opt_cfg: Any, params: Iterable[nn.Parameter],
                    workers: int = 1) -> AsyncOptimizer:
    """The optimizer ``opt_cfg`` names, over the shared model's parameters, with room for
    ``workers`` slots of per-worker statistics where it keeps them."""
    if opt_cfg.name == "shared_rmsprop":
        return SharedRMSProp(params, alpha=opt_cfg.alpha, eps=opt_cfg.eps, workers=workers,
                             initial_square_avg=opt_cfg.initial_square_avg)
    if opt_cfg.name == "rmsprop":
        return RMSProp(params, alpha=opt_cfg.alpha, eps=opt_cfg.eps, workers=workers,
                       initial_square_avg=opt_cfg.initial_square_avg)
    if opt_cfg.name == "momentum_sgd":
        return MomentumSGD(params, momentum=opt_cfg.momentum, workers=workers)
    raise ValueError(f"unknown optimizer '{opt_cfg.name}'")
