"""asyncrl: asynchronous methods for deep reinforcement learning (Mnih et al., 2016).

``asyncrl.train(overrides)`` runs one job and ``asyncrl.load(run_dir)`` gives a trained
agent (``asyncrl.api``). They load on first use: the CLI's ``--help`` and its config checks
import this package, and must not pay for torch.
"""

__version__ = "0.1.0"

import os
from typing import Any

from asyncrl.errors import UserError

# MuJoCo's default GL backend (GLFW) needs a display; render headless unless told otherwise
os.environ.setdefault("MUJOCO_GL", "egl")

_API = ("train", "load", "TrainResult", "Agent")
__all__ = [*_API, "UserError"]


def __getattr__(name: str) -> Any:
    if name in _API:
        from asyncrl import api

        return getattr(api, name)
    raise AttributeError(f"module 'asyncrl' has no attribute {name!r}")
