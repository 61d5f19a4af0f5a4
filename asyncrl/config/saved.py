"""A saved run's config (a resolved plain dict from its checkpoint) back into the typed
schemas, with the keys added or removed since it was saved, so that it resumes on what it
trained with."""

from __future__ import annotations

from typing import Any

from omegaconf import OmegaConf

from asyncrl.config.schemas import SCHEMAS, TrainConfig
from asyncrl.errors import UserError

GROUP_KEYS = {"algo": "name", "env": "family", "network": "name", "optimizer": "name"}


def typed_config(data: dict[str, Any]) -> Any:
    """A saved, resolved config (plain dict) back into its typed schemas, for resuming."""
    base = OmegaConf.structured(TrainConfig)
    for group, key in GROUP_KEYS.items():
        node = data.get(group) or {}
        schema = SCHEMAS[group].get(node.get(key, ""))
        if schema is None:
            raise UserError(f"saved config has an unknown {group} '{node.get(key)}'")
        base[group] = OmegaConf.structured(schema)
    return OmegaConf.merge(base, _with_keys_added_since(_without_keys_removed(data)))


# top-level keys that existed on main for a while and were removed, with the value that is
# today's behaviour: a run saved with it resumes; one saved with another value is refused
KEYS_REMOVED = {"precision": "fp32"}  # bf16 autocast, built and removed (docs/performance.md)


def _without_keys_removed(data: dict[str, Any]) -> dict[str, Any]:
    for key, today in KEYS_REMOVED.items():
        if key in data and data[key] != today:
            raise UserError(f"this run was saved with {key}={data[key]}, which this asyncrl "
                            f"no longer has (only {today})")
    return {k: v for k, v in data.items() if k not in KEYS_REMOVED}


# keys added since runs were first saved (checkpoint format 1), for the options that have
# them, with the value those runs used where today's default differs or the schema leaves
# the value to YAML (MISSING): a saved run resumes on what it trained with
KEYS_ADDED: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {
    ("network", ("ff", "lstm")): {"centre_input": False, "mlp_activation": "relu"},
    # before default_lr, conf/config.yaml gave every run lr 7e-4; before episode_updates,
    # every update was a bootstrapped segment
    ("algo", ("a3c",)): {"default_lr": 7e-4, "episode_updates": False},
}


def _with_keys_added_since(data: dict[str, Any]) -> dict[str, Any]:
    """A run saved before a key of ``KEYS_ADDED`` existed gets that key's old value."""
    filled = dict(data)
    for (group, options), added in KEYS_ADDED.items():
        node = data.get(group) or {}
        if node.get(GROUP_KEYS[group]) not in options:
            continue
        missing = {k: v for k, v in added.items() if k not in node}
        if missing:
            filled[group] = {**node, **missing}
    return filled
