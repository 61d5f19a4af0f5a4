"""Spatial softmax (Levine et al. 2016): each feature map becomes the expected (x, y) of
its activations, a softmax over positions, so the layer after sees where features are.

Coordinates run from -1 (left, top) to 1 (right, bottom). The output is every channel's x,
then every channel's y: (B, 2C).
"""

from __future__ import annotations

import torch
from torch import nn


class SpatialSoftmax(nn.Module):
    """``forward(maps (B, C, H, W)) -> (B, 2C)`` expected coordinates per channel."""

    xs: torch.Tensor  # the x of each position, row by row (H*W,)
    ys: torch.Tensor

    def __init__(self, height: int, width: int) -> None:
        super().__init__()
        ys, xs = torch.meshgrid(torch.linspace(-1.0, 1.0, height),
                                torch.linspace(-1.0, 1.0, width), indexing="ij")
        # buffers, not parameters: fixed positions, moved and saved with the module
        self.register_buffer("xs", xs.reshape(-1), persistent=False)
        self.register_buffer("ys", ys.reshape(-1), persistent=False)

    def forward(self, maps: torch.Tensor) -> torch.Tensor:
        weights = maps.flatten(2).softmax(dim=-1)  # (B, C, H*W), summing to 1 per channel
        return torch.cat([weights @ self.xs, weights @ self.ys], dim=-1)
