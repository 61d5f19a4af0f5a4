"""Timing scripts: where a worker's time goes, beside ``nox -s bench`` (docs/performance.md).
Each is ``python -m asyncrl.tools.timing.NAME``."""

from __future__ import annotations

from typing import Any


def compose(*overrides: str) -> Any:
    """The config of ``asyncrl OVERRIDES``, typed, as the scripts time it."""
    from asyncrl.commands.prepare import register_schemas
    from asyncrl.config.compose import compose_config

    register_schemas()
    return compose_config(list(overrides), as_object=True)
