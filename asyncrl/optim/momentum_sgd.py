"""Momentum SGD with per-worker momentum (paper, Supp. 7).

    m_i <- alpha * m_i + (1 - alpha) * dtheta_i
    theta <- theta - lr * m_i

Each worker i keeps its own m_i; the parameters are shared and updated without locks.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from torch import nn

from asyncrl.optim.base import AsyncOptimizer
from asyncrl.optim.kernels import momentum_update


class MomentumSGD(AsyncOptimizer):
    per_worker = True

    def __init__(self, params: Iterable[nn.Parameter], momentum: float = 0.99,
                 workers: int = 1) -> None:
        super().__init__(params, workers)
        self.momentum = momentum

    def update(self, param: np.ndarray, grad: np.ndarray, stat: np.ndarray, lr: float) -> None:
        momentum_update(param, grad, stat, self.momentum, lr)
