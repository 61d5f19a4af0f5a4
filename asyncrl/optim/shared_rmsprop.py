"""Shared RMSProp (paper, Eq. 9 and Supp. 7).

    g <- alpha * g + (1 - alpha) * dtheta^2
    theta <- theta - lr * dtheta / sqrt(g + eps)

g is one tensor per parameter, in shared memory, read and written by every worker without
locks. Epsilon sits inside the square root as the paper writes it (torch.optim.RMSprop puts
it outside). ``rsqrt`` avoids torch.sqrt's slow path on exact zeros and denormals, which dead
ReLUs produce in g.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import nn


class SharedRMSProp:
    """Steps shared parameters with gradients a worker computed on its local copy."""

    def __init__(self, params: Iterable[nn.Parameter], alpha: float = 0.99, eps: float = 0.1):
        self.params = list(params)
        self.alpha = alpha
        self.eps = eps
        self.square_avg = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in
                           self.params]
        self._scratch: list[torch.Tensor] | None = None

    def share_memory(self) -> SharedRMSProp:
        for g in self.square_avg:
            g.share_memory_()
        return self

    def shared_tensors(self) -> list[torch.Tensor]:
        return list(self.square_avg)

    @torch.no_grad()
    def step(self, grads: Sequence[torch.Tensor], lr: float) -> None:
        """Apply one update. ``grads`` are the worker's local gradients, matched by position."""
        if self._scratch is None:
            self._scratch = [torch.empty_like(g) for g in self.square_avg]
        for param, grad, g, buf in zip(self.params, grads, self.square_avg, self._scratch,
                                       strict=True):
            g.mul_(self.alpha).addcmul_(grad, grad, value=1.0 - self.alpha)
            torch.add(g, self.eps, out=buf)
            buf.rsqrt_().mul_(grad)
            param.add_(buf, alpha=-lr)

    def state_dict(self) -> dict[str, Any]:
        return {"square_avg": [g.detach().clone() for g in self.square_avg]}

    @torch.no_grad()
    def load_state_dict(self, state: dict[str, Any]) -> None:
        saved = state["square_avg"]
        if len(saved) != len(self.square_avg):
            raise ValueError("optimizer state does not match the model's parameters")
        for g, s in zip(self.square_avg, saved, strict=True):
            g.copy_(s)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_scratch"] = None  # per-process working memory, never shared
        return state
