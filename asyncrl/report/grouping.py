"""Which runs are samples of one experiment: the same config but for the keys a sweep
varies (``runs.VARYING``), and the label that tells groups apart.

A label is the environment, algorithm, network, optimizer and workers, then every other key
whose value is not the same in all the runs found (``algo.gae_lambda=0.95``), so runs that
differ in one option land in different groups under names that say how. A key a run's
config lacks (a run saved before the key existed) takes the value such a run used.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from omegaconf import OmegaConf

from asyncrl.report.runs import VARYING, Run

# named in every label already, or following from the environment rather than chosen
LABELLED = ("algo.name", "network.name", "optimizer.name", "workers", "env.family")
DERIVED = ("algo.default_lr",)  # only the default of lr, which a sweep varies


def flat_settings(config: dict[str, Any]) -> dict[str, Any]:
    """Every key of a saved config as ``group.key`` -> value, missing keys filled in."""
    from asyncrl.config.saved import typed_config

    try:
        full = OmegaConf.to_container(typed_config(config), resolve=True,
                                      throw_on_missing=False, enum_to_str=True)
    except Exception:  # a foreign or damaged config: compare what it says
        full = config
    flat: dict[str, Any] = {}

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(f"{prefix}.{key}" if prefix else str(key), value)
        else:
            flat[prefix] = tuple(node) if isinstance(node, list) else node

    walk("", full)
    return flat


def _compared(key: str, ignore: Sequence[str]) -> bool:
    top = key.split(".")[0]
    return not (top in VARYING or top in ignore or key in LABELLED or key in DERIVED)


def group_runs(runs: list[Run], ignore: tuple[str, ...] = ()) -> dict[str, list[Run]]:
    """Runs by experiment label, in label order; ``ignore`` names keys to pool over too."""
    settings = [flat_settings(run.config) for run in runs]
    bases = [run.experiment(ignore) for run in runs]
    keys = sorted({key for s in settings for key in s if _compared(key, ignore)})
    groups: dict[str, list[Run]] = defaultdict(list)
    for run, own, base in zip(runs, settings, bases, strict=True):
        extras = [f"{key}={own.get(key)}" for key in keys
                  if _differs(key, own, base, settings, bases)]
        groups[", ".join([base, *extras])].append(run)
    return dict(sorted(groups.items()))


def _differs(key: str, own: dict[str, Any], base: str, settings: list[dict[str, Any]],
             bases: list[str]) -> bool:
    """Whether ``key`` tells this run's group apart. An environment's keys count only among
    runs of the same environment, whose label does not already tell them apart."""
    env_key = key.startswith("env.")
    values = {repr(s.get(key)) for s, b in zip(settings, bases, strict=True)
              if not env_key or b == base}
    return len(values) > 1
