"""Gradient-norm clipping on a list of gradient tensors (not on parameters' .grad)."""

from __future__ import annotations

from collections.abc import Sequence

import torch


@torch.no_grad()
def clip_grad_norm(grads: Sequence[torch.Tensor], max_norm: float) -> float:
    """Scale ``grads`` in place so their global L2 norm is at most ``max_norm``.

    Returns the norm before clipping, which is what is worth logging.
    """
    total = float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g)
                                                        for g in grads])))
    if total > max_norm:
        scale = max_norm / (total + 1e-6)
        for g in grads:
            g.mul_(scale)
    return total
