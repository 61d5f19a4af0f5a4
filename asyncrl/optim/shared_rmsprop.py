"""RMSProp with shared or per-worker statistics (paper, Eq. 9 and Supp. 7).

    g <- alpha * g + (1 - alpha) * dtheta^2
    theta <- theta - lr * dtheta / sqrt(g + eps)

``SharedRMSProp`` keeps one g per parameter, read and written by every worker without locks;
``RMSProp`` gives each worker its own g. Epsilon sits inside the square root as the paper
writes it (torch.optim.RMSprop puts it outside), which also keeps the square root off
exact zeros, which dead ReLUs produce in g. The update itself is one fused loop
(``kernels.rmsprop_update``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch
from torch import nn

from asyncrl.optim.base import AsyncOptimizer
from asyncrl.optim.kernels import rmsprop_update


class SharedRMSProp(AsyncOptimizer):
    """One squared-gradient average per parameter, shared by all workers."""

    def __init__(self, params: Iterable[nn.Parameter], alpha: float = 0.99, eps: float = 0.1,
                 workers: int = 1, initial_square_avg: float = 0.0) -> None:
        super().__init__(params, workers)
        self.alpha = alpha
        self.eps = eps
        for g in self.statistics:
            g.fill_(initial_square_avg)

    @property
    def square_avg(self) -> list[torch.Tensor]:
        return self.statistics

    def update(self, param: np.ndarray, grad: np.ndarray, stat: np.ndarray, lr: float) -> None:
        rmsprop_update(param, grad, stat, self.alpha, self.eps, lr)


class RMSProp(SharedRMSProp):
    """The same update with each worker keeping its own g (the paper's "RMSProp")."""

    per_worker = True
