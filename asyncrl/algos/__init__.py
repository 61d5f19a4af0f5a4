"""The four asynchronous methods of the paper, behind one interface the worker loop drives.

An algorithm object acts (``act``, ``eval_act``), says how many steps a segment has
(``segment_steps``), whether it needs the shared target network (``uses_target``) and the
next action (``needs_next_action``), and turns a segment into a loss (``loss``).
"""

from __future__ import annotations

from typing import Any

import torch

from asyncrl.algos.a3c import A3C
from asyncrl.algos.segment import SegmentBatch
from asyncrl.algos.value_based import NStepQ, OneStepQ, OneStepSarsa, ValueBased

ALGORITHMS: dict[str, Any] = {
    "a3c": A3C,
    "one_step_q": OneStepQ,
    "one_step_sarsa": OneStepSarsa,
    "nstep_q": NStepQ,
}

__all__ = ["ALGORITHMS", "A3C", "NStepQ", "OneStepQ", "OneStepSarsa", "SegmentBatch",
           "ValueBased", "algorithm_class", "build_algorithm"]


def algorithm_class(name: str) -> Any:
    """The class of algorithm ``name``: what it learns (``head``), whether it uses a target
    network, and how it acts and learns."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm '{name}'") from None


def build_algorithm(algo_cfg: Any, generator: torch.Generator) -> Any:
    """The algorithm ``algo_cfg.name`` names, drawing its randomness from ``generator``."""
    return algorithm_class(algo_cfg.name)(algo_cfg, generator)
