"""Momentum SGD with per-worker momentum (paper, Supp. 7).

    m_i <- alpha * m_i + (1 - alpha) * dtheta_i
    theta <- theta - lr * m_i

Each worker i keeps its own m_i; the parameters are shared and updated without locks.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

from asyncrl.optim.base import AsyncOptimizer


class MomentumSGD(AsyncOptimizer):
    per_worker = True

    def __init__(self, params: Iterable[nn.Parameter], momentum: float = 0.99,
                 workers: int = 1) -> None:
        super().__init__(params, workers)
        self.momentum = momentum

    def update(self, param: torch.Tensor, grad: torch.Tensor, stat: torch.Tensor,
               buf: torch.Tensor, lr: float) -> None:
        stat.mul_(self.momentum).add_(grad, alpha=1.0 - self.momentum)
        param.add_(stat, alpha=-lr)
