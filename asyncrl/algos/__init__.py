"""The four asynchronous methods of the paper, behind one interface the worker loop drives.

An algorithm class declares its facts: its config schema (``config``; value-based or not is
``config.value_based``), the network head it learns (``head``), whether it needs the shared
target network (``uses_target``) and the next action (``needs_next_action``), the statistics
its updates log (``metrics``) and which of them say its network went blind
(``blindness_spreads``). An object of it acts for k environments in one forward (``act``, in
training or in evaluation), says how many steps a segment has (``segment_steps``) and turns
a segment into a loss (``loss``).

The package loads its torch code only when a name of it is asked for: ``asyncrl.config``
reads ``asyncrl.algos.configs``, and checking a config must not import torch.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from asyncrl.algos.a3c import A3C
    from asyncrl.algos.segment import SegmentBatch
    from asyncrl.algos.value_based import NStepQ, OneStepQ, OneStepSarsa, ValueBased

_MODULE_OF = {"A3C": "a3c", "SegmentBatch": "segment", "ValueBased": "value_based",
              "OneStepQ": "value_based", "OneStepSarsa": "value_based",
              "NStepQ": "value_based"}
CLASSES = ("A3C", "OneStepQ", "OneStepSarsa", "NStepQ")

__all__ = ["A3C", "NStepQ", "OneStepQ", "OneStepSarsa", "SegmentBatch", "ValueBased",
           "algorithm_class", "algorithm_classes", "build_algorithm"]


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)


@cache
def algorithm_classes() -> dict[str, Any]:
    """Every algorithm class, by the name its config schema gives it."""
    classes = [__getattr__(name) for name in CLASSES]
    return {cls.config.name: cls for cls in classes}


def algorithm_class(name: str) -> Any:
    """The class of algorithm ``name``: what it learns (``head``), whether it uses a target
    network, and how it acts and learns."""
    try:
        return algorithm_classes()[name]
    except KeyError:
        raise ValueError(f"unknown algorithm '{name}'") from None


def build_algorithm(algo_cfg: Any, generator: torch.Generator,
                    exploration_seed: int | None = None, environments: int = 1) -> Any:
    """The algorithm ``algo_cfg.name`` names, drawing its randomness from ``generator`` and,
    where given, a value-based worker's final epsilon from ``exploration_seed`` (one for
    each of its ``environments`` with ``algo.epsilon_per_environment``)."""
    return algorithm_class(algo_cfg.name)(algo_cfg, generator, exploration_seed, environments)
