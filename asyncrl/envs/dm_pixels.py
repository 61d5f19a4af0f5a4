"""MuJoCo tasks from pixels: dm_control's suite rendered headless to 84x84 RGB.

The paper's pixel tasks are a pendulum, a 2D point mass and a gripper; dm_control's suite
has them as ``pendulum/swingup``, ``point_mass/easy`` and ``manipulator/bring_ball``.
Frames come from MuJoCo's own renderer through EGL (or OSMesa: ``MUJOCO_GL``). On a machine
without a GPU that is Mesa's software rasteriser, so the scene is drawn without
multisampling, shadows, reflections or skybox: about 10x faster there, and the agent still
sees every body.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import gymnasium as gym
import numpy as np

from asyncrl.errors import UserError

RENDER_FIX = ("install Mesa's EGL for headless rendering (Debian: apt-get install libegl1 "
              "libgl1-mesa-dri), or OSMesa (libosmesa6) and set MUJOCO_GL=osmesa")


def _plain_scene(physics: Any, scene: Any) -> None:
    import mujoco

    for flag in (mujoco.mjtRndFlag.mjRND_SHADOW, mujoco.mjtRndFlag.mjRND_REFLECTION,
                 mujoco.mjtRndFlag.mjRND_SKYBOX):
        scene.flags[flag] = 0


def episode_steps(domain: str, task: str, action_repeat: int) -> int:
    from dm_control import suite

    env = suite.load(domain, task)
    return int(np.ceil(float(env._step_limit) / action_repeat))


def check_headless_rendering() -> None:
    """Raise UserError unless MuJoCo can open an offscreen GL context here.

    Tried in a child process: a broken GL stack can abort the process instead of raising.
    """
    probe = "import mujoco; c = mujoco.GLContext(8, 8); c.make_current(); c.free()"
    try:
        result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                timeout=60)
    except subprocess.TimeoutExpired:
        raise UserError(f"MuJoCo's headless renderer did not start within 60 s; "
                        f"{RENDER_FIX}") from None
    if result.returncode != 0:
        import os

        backend = os.environ.get("MUJOCO_GL", "egl")
        raise UserError(f"pixel tasks need MuJoCo to render headless, which failed with "
                        f"MUJOCO_GL={backend}; {RENDER_FIX}")


class DMControlPixels(gym.Env):
    """(3, size, size) uint8 frames from one camera; actions in the task's bounds."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 25}

    def __init__(self, domain: str, task: str, size: int = 84, camera_id: int = 0,
                 action_repeat: int = 4, render_mode: str | None = None) -> None:
        self.domain, self.task, self.size = domain, task, size
        self.camera_id, self.action_repeat = camera_id, action_repeat
        self.render_mode = render_mode
        self._load(seed=None)
        spec = self._env.action_spec()
        self.action_space = gym.spaces.Box(spec.minimum.astype(np.float32),
                                           spec.maximum.astype(np.float32), dtype=np.float32)
        self.observation_space = gym.spaces.Box(0, 255, (3, size, size), np.uint8)
        self.max_steps = int(np.ceil(float(self._env._step_limit) / action_repeat))
        self._frame = np.zeros((size, size, 3), np.uint8)

    def _load(self, seed: int | None) -> None:
        from dm_control import suite

        self._env = suite.load(self.domain, self.task, task_kwargs={"random": seed})
        quality = self._env.physics.model.vis.quality
        quality.offsamples = 0
        quality.shadowsize = 0

    def _observe(self) -> np.ndarray:
        self._frame = self._env.physics.render(self.size, self.size, camera_id=self.camera_id,
                                               scene_callback=_plain_scene)
        return np.ascontiguousarray(self._frame.transpose(2, 0, 1))

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:  # the task draws its initial states from its own generator
            self._load(seed)
        self._env.reset()
        return self._observe(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        reward = 0.0
        time_step = None
        for _ in range(self.action_repeat):
            time_step = self._env.step(np.asarray(action, dtype=np.float64))
            reward += float(time_step.reward or 0.0)
            if time_step.last():
                break
        assert time_step is not None
        over = time_step.last()
        terminated = bool(over and time_step.discount == 0.0)
        return self._observe(), reward, terminated, bool(over and not terminated), {}

    def render(self) -> np.ndarray | None:
        return self._frame.copy() if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        self._env.close()
