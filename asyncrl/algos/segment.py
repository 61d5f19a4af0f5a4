"""What a worker hands its algorithm after acting: one segment of at most t_max steps per
environment, and the network's outputs over several segments at once."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from asyncrl.nets import LSTMState


@dataclass
class SegmentBatch:
    """States ``s_t .. s_{t+n}`` (one more than the actions), the actions, clipped rewards,
    learning terminals, the recurrent state before ``s_t``, and (for Sarsa) the action chosen
    for ``s_{t+n}``, which the next segment then takes."""

    obs: torch.Tensor
    actions: torch.Tensor
    rewards: list[float]
    terminals: list[bool]
    start_state: LSTMState | None = None
    next_action: int | None = None

    @property
    def steps(self) -> int:
        return len(self.rewards)


def join(parts: Sequence[torch.Tensor]) -> torch.Tensor:
    """``torch.cat`` that hands a single part back as it is (the one-environment loop)."""
    return parts[0] if len(parts) == 1 else torch.cat(list(parts))


def _split(out: Any, lengths: list[int]) -> list[Any]:
    """Cut a packed output (a tensor, or a Gaussian policy's pair) into per-segment pieces."""
    if isinstance(out, tuple):
        return [tuple(parts) for parts in zip(*(_split(o, lengths) for o in out), strict=True)]
    return list(torch.split(out, lengths))


def segment_outputs(model: Any, batches: Sequence[SegmentBatch],
                    rows: Sequence[slice]) -> list[tuple[Any, ...]]:
    """The model's outputs (without its recurrent state) over ``batch.obs[rows[i]]`` of each
    segment, one tuple per segment.

    A feed-forward model reads every segment's rows in one forward, since batching is what
    makes several environments per worker cheaper than several workers. A recurrent model
    reads each segment from its own start state, so a slice must then start at 0.
    """
    if model.recurrent:
        outputs = []
        for batch, row in zip(batches, rows, strict=True):
            if row.start not in (None, 0):
                raise ValueError("a recurrent model reads a segment from its start")
            outputs.append(tuple(model(batch.obs[row], batch.start_state)[:-1]))
        return outputs
    pieces = [batch.obs[row] for batch, row in zip(batches, rows, strict=True)]
    packed = model(join(pieces), None)[:-1]
    if len(batches) == 1:
        return [tuple(packed)]
    lengths = [len(piece) for piece in pieces]
    return [tuple(parts) for parts in zip(*(_split(o, lengths) for o in packed), strict=True)]


@contextmanager
def last_conv_maps(model: Any) -> Iterator[list[torch.Tensor]]:
    """The torso's last conv maps (after its ReLU, flattened) of every forward of ``model``
    inside the block, detached; none for a torso without them (vectors, a spatial softmax)."""
    maps: list[torch.Tensor] = []
    conv = getattr(getattr(model, "torso", None), "conv", None)
    if not (isinstance(conv, nn.Sequential) and isinstance(conv[-1], nn.Flatten)):
        yield maps
        return
    hook = conv.register_forward_hook(lambda _module, _inputs, out: maps.append(out.detach()))
    try:
        yield maps
    finally:
        hook.remove()


def live_units(maps: Sequence[torch.Tensor]) -> dict[str, float]:
    """``live_units``: the share of the last conv's (unit, position) outputs that differ
    across the states an update read, as the probe reads ``conv.2`` on its screens. A ReLU
    that outputs 0 on every state passes no gradient and stays so: near 0.1 in networks that
    went blind, 0.4-0.8 in ones that learned (docs/notes/2026-12-07-blindness.md). Empty
    where there are no maps or a single state."""
    states = join(maps) if maps else None
    if states is None or len(states) < 2:
        return {}
    return {"live_units": float((states.std(dim=0) > 1e-6).float().mean())}
