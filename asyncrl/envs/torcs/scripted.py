"""A scripted driver: the reference score that reports compare agents with, as the paper
compares with a human tester.

It sees what the driver module reports (position, heading, speed) and the track's
centre line: it steers at a point on the centre line ahead of the car, and holds the
highest speed from which it can still brake down to every corner's grip limit ahead.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from asyncrl.envs.torcs import protocol as p
from asyncrl.envs.torcs.env import TorcsEnv

GRAVITY = 9.81
LOOKAHEAD_SAMPLES = 150
LOOKAHEAD_DISTANCE = 2.0 * np.arange(LOOKAHEAD_SAMPLES)  # samples are ~2 m apart


def corner_speed_limits(centre: np.ndarray, grip: float) -> np.ndarray:
    """Per track sample, sqrt(grip * g * radius): the fastest a car can take that bend."""
    heading = np.arctan2(np.diff(centre[:, 1], append=centre[0, 1]),
                         np.diff(centre[:, 0], append=centre[0, 0]))
    turn = np.abs((np.diff(heading, append=heading[0]) + np.pi) % (2 * np.pi) - np.pi)
    step = np.hypot(np.diff(centre[:, 0], append=centre[0, 0]),
                    np.diff(centre[:, 1], append=centre[0, 1]))
    # smooth over ~10 m so one kink in the sampling is not read as a hairpin
    kernel = np.ones(5) / 5
    curvature = np.convolve(np.concatenate([turn[-2:], turn, turn[:2]]), kernel, "valid")
    curvature = curvature / np.maximum(step, 1e-3)
    return np.sqrt(grip * GRAVITY / np.maximum(curvature, 1e-6))


class ScriptedDriver:
    def __init__(self, env: TorcsEnv, grip: float = 1.0, braking: float = 6.0,
                 top_speed: float = 80.0) -> None:
        self.env = env
        self.grip, self.braking, self.top_speed = grip, braking, top_speed
        self._limits: np.ndarray | None = None

    def act(self) -> np.ndarray:
        """(steer, pedal) for the env's current state, in the continuous action space."""
        env = self.env
        state = env.state
        assert state is not None
        centre = env.track.centre
        if self._limits is None or len(self._limits) != len(centre):
            self._limits = corner_speed_limits(centre, self.grip)
        n = len(centre)
        here = env.nearest_sample()
        speed = state[p.SPEED_X]
        ahead = int((6.0 + 0.5 * max(speed, 0.0)) / 2.0)  # samples are ~2 m apart
        target = centre[(here + ahead) % n]
        wanted = math.atan2(target[1] - state[p.Y], target[0] - state[p.X])
        error = (wanted - state[p.YAW] + math.pi) % (2 * math.pi) - math.pi
        steer = float(np.clip(error / 0.4, -1.0, 1.0))
        # the speed now from which braking at self.braking m/s^2 meets every limit ahead
        window = np.arange(here, here + LOOKAHEAD_SAMPLES) % n
        allowed = np.sqrt(self._limits[window] ** 2
                          + 2 * self.braking * LOOKAHEAD_DISTANCE).min()
        allowed = min(allowed, self.top_speed)
        if speed < allowed - 1.0:
            pedal = 1.0
        elif speed > allowed + 1.0:
            pedal = -0.6
        else:
            pedal = 0.3
        return np.array([steer, pedal], dtype=np.float32)


def drive_episode(env: TorcsEnv, driver: ScriptedDriver) -> tuple[float, dict[str, Any]]:
    env.reset()
    score, done = 0.0, False
    info: dict[str, Any] = {}
    while not done:
        _, reward, terminated, truncated, info = env.step(driver.act())
        score += reward
        done = terminated or truncated
    return score, info
