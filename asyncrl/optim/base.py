"""What the three asynchronous optimizers share: statistics tensors in shared memory.

Shared statistics have the shape of their parameter. Per-worker statistics get a leading
dimension of one slot per worker, also in shared memory, so that the launcher can checkpoint
them and a restarted worker finds its own again; a worker only ever touches its own slot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

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
        self._scratch: list[torch.Tensor] | None = None

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

    def scratch(self) -> list[torch.Tensor]:
        """Per-process working memory, allocated on first use and never shared."""
        if self._scratch is None:
            self._scratch = [torch.empty_like(p) for p in self.params]
        return self._scratch

    @torch.no_grad()
    def step(self, grads: Sequence[torch.Tensor], lr: float, worker: int = 0) -> None:
        """Apply one update. ``grads`` are matched to the parameters by position."""
        for param, grad, stat, buf in zip(self.params, grads, self.slot(worker), self.scratch(),
                                          strict=True):
            self.update(param, grad, stat, buf, lr)

    def update(self, param: torch.Tensor, grad: torch.Tensor, stat: torch.Tensor,
               buf: torch.Tensor, lr: float) -> None:
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
        state["_scratch"] = None
        return state
