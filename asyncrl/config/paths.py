"""Where the config tree is: shipped inside the package, or at the top of a source checkout."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path


@cache
def config_dir() -> Path:
    """The folder holding ``config.yaml`` and the config groups.

    An installed asyncrl carries it as the ``asyncrl.conf`` package; running from a source
    checkout (``python -m asyncrl`` at the repository root shadows the installed package) it
    is the repository's ``conf/``.
    """
    try:
        spec = importlib.util.find_spec("asyncrl.conf")
    except ModuleNotFoundError:
        spec = None
    candidates = list(spec.submodule_search_locations or []) if spec else []
    candidates.append(str(Path(__file__).resolve().parents[2] / "conf"))  # asyncrl/config/
    for candidate in candidates:
        if (Path(candidate) / "config.yaml").is_file():
            return Path(candidate)
    raise RuntimeError("asyncrl's config tree is missing: reinstall the package")
