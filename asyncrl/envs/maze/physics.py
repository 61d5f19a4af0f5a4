"""Walking in the maze, one game frame at a time (numba-compiled: a step is 4 frames, and
per-frame Python would cost more than drawing the view)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def clear(walls: np.ndarray, x: float, y: float, radius: float) -> bool:
    """Whether a body of ``radius`` centred at (x, y) touches no wall cell."""
    for cx in (x - radius, x + radius):
        for cy in (y - radius, y + radius):
            if walls[int(cy), int(cx)]:
                return False
    return True


@njit(cache=True)
def walk(walls: np.ndarray, x: float, y: float, angle: float, forward: float, strafe: float,
         turn: float, frames: int, move_per_frame: float, turn_per_frame: float, radius: float,
         reach: float, apples: np.ndarray, apple_on: np.ndarray, portal_x: float,
         portal_y: float) -> tuple[float, float, float, int, bool]:
    """Turn, move (sliding along walls: each axis moves only if the body stays clear) and
    take what is within ``reach``, for up to ``frames`` frames.

    Returns the new pose, the apples taken (``apple_on`` is updated in place) and whether
    the portal was entered, which ends the walk early: the agent is respawned elsewhere.
    """
    taken = 0
    for _ in range(frames):
        angle = (angle + turn * turn_per_frame) % (2 * math.pi)
        dx = math.cos(angle) * forward - math.sin(angle) * strafe
        dy = math.sin(angle) * forward + math.cos(angle) * strafe
        norm = math.hypot(dx, dy)
        if norm > 0:
            dx, dy = dx / norm * move_per_frame, dy / norm * move_per_frame
            if clear(walls, x + dx, y, radius):
                x += dx
            if clear(walls, x, y + dy, radius):
                y += dy
        for i in range(apples.shape[0]):
            if apple_on[i] and math.hypot(apples[i, 0] - x, apples[i, 1] - y) < reach:
                apple_on[i] = False
                taken += 1
        if math.hypot(portal_x - x, portal_y - y) < reach:
            return x, y, angle, taken, True
    return x, y, angle, taken, False
