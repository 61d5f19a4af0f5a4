"""What the three asynchronous optimizers share: statistics tensors in shared memory.

Shared statistics have the shape of their parameter. Per-worker statistics get a leading
dimension of one slot per worker, also in shared memory, so that the launcher can checkpoint
them and a restarted worker finds its own again; a worker only ever touches its own slot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn


class AsyncOptimizer:
    """Steps shared parameters with gradients a worker computed on its local copy."""

    per_worker = False

    def __init__(self, params: Iterable[nn.Parameter], workers: int = 1) -> None:
        self.params = list(params)
        self.workers = workers
        slots = (workers,) if self.per_worker else ()
        self.statistics = [torch.zeros(*slots, *p.shape, dtype=p.dtype) for p in self.params]
        self._views: dict[int, tuple[tuple[int, ...], list[tuple[np.ndarray, np.ndarray]]]] = {}

    def share_memory(self) -> AsyncOptimizer:
        for s in self.statistics:
            s.share_memory_()
        return self

    def shared_tensors(self) -> list[torch.Tensor]:
        return list(self.statistics)

    def slot(self, worker: int) -> list[torch.Tensor]:
        """The statistics ``worker`` reads and writes."""
        if not self.per_worker:
            return self.statistics
        return [s[worker] for s in self.statistics]

    def flat_views(self, worker: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """(parameter, statistics) of ``worker`` as flat numpy arrays over the same memory.

        Taking the views costs ~6 us a tensor, so they are kept, and taken again only when a
        storage has moved (``share_memory_`` moves it)."""
        where = tuple(t.data_ptr() for t in (*self.params, *self.statistics))
        cached = self._views.get(worker)
        if cached is None or cached[0] != where:
            views = [(_flat(p), _flat(s))
                     for p, s in zip(self.params, self.slot(worker), strict=True)]
            self._views[worker] = cached = (where, views)
        return cached[1]

    @torch.no_grad()
    def step(self, grads: Sequence[torch.Tensor], lr: float, worker: int = 0) -> None:
        """Apply one update. ``grads`` are matched to the parameters by position."""
        for (param, stat), grad in zip(self.flat_views(worker), grads, strict=True):
            self.update(param, _flat(grad.contiguous()), stat, lr)

    def update(self, param: np.ndarray, grad: np.ndarray, stat: np.ndarray, lr: float) -> None:
        """Update one parameter in place; the arrays are flat and of the parameter's dtype."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        return {"statistics": [s.detach().clone() for s in self.statistics]}

    @torch.no_grad()
    def load_state_dict(self, state: dict[str, Any]) -> list[str]:
        """Restore saved statistics; returns notes on what could not be restored as saved.

        Per-worker slots follow the worker count of the new run: slots the checkpoint has
        are restored, new slots start from zero, slots of workers no longer there are dropped.
        """
        saved = state.get("statistics", state.get("square_avg"))
        if saved is None or len(saved) != len(self.statistics):
            raise ValueError("optimizer state does not match the model's parameters")
        notes: list[str] = []
        for s, old in zip(self.statistics, saved, strict=True):
            if self.per_worker and old.shape[1:] == s.shape[1:] and old.shape[0] != s.shape[0]:
                kept = min(old.shape[0], s.shape[0])
                s.zero_()
                s[:kept].copy_(old[:kept])
                note = (f"per-worker statistics saved for {old.shape[0]} workers, "
                        f"restored for {kept} of {s.shape[0]}")
                if note not in notes:
                    notes.append(note)
            elif old.shape != s.shape:
                raise ValueError("optimizer state does not match the model's parameters")
            else:
                s.copy_(old)
        return notes

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_views"] = {}  # numpy views do not survive pickling; each process takes its own
        return state


def _flat(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().view(-1).numpy()
