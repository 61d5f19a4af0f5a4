"""asyncrl: asynchronous methods for deep reinforcement learning (Mnih et al., 2016)."""

__version__ = "0.1.0"

import os

# MuJoCo's default GL backend (GLFW) needs a display; render headless unless told otherwise
os.environ.setdefault("MUJOCO_GL", "egl")
