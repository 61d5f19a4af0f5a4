"""From the agent's action to TORCS's steering, throttle and brake, and from a car's state
to the reward and the reasons an episode ends. Pure functions: testable without TORCS."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

DRIVER_HZ = 50  # TORCS calls a robot's drive() 50 times per simulated second

# TORCS steers left for positive values; pedals are "throttle" above 0, "brake" below
DEFAULT_STEER_LEVELS = (0.5, 0.0, -0.5)
DEFAULT_PEDAL_LEVELS = (1.0, 0.0, -0.5)


@dataclass(frozen=True)
class Command:
    steer: float
    accel: float
    brake: float


def pedal_command(steer: float, pedal: float) -> Command:
    """One pedal axis: the positive part is throttle, the negative part brake."""
    steer = float(np.clip(steer, -1.0, 1.0))
    pedal = float(np.clip(pedal, -1.0, 1.0))
    return Command(steer, max(pedal, 0.0), max(-pedal, 0.0))


def discrete_table(steer_levels: tuple[float, ...] = DEFAULT_STEER_LEVELS,
                   pedal_levels: tuple[float, ...] = DEFAULT_PEDAL_LEVELS) -> list[Command]:
    """Every steer x pedal pair, steering varying slowest: for the Q methods and
    A3C with a softmax policy."""
    return [pedal_command(s, p) for s, p in itertools.product(steer_levels, pedal_levels)]


def continuous_command(action: np.ndarray) -> Command:
    """A Gaussian policy's (steer, pedal) pair, clipped to the car's range."""
    return pedal_command(float(action[0]), float(action[1]))


def progress_speed(speed: float, angle: float) -> float:
    """Speed along the track's axis, less the speed across it: v cos(theta) - |v sin(theta)|,
    with theta the angle between the car's heading and the track's direction.

    Driving straight down the track earns v; sliding sideways or driving the wrong way
    costs."""
    return speed * math.cos(angle) - abs(speed * math.sin(angle))


def off_track(to_middle: float, width: float, margin: float) -> bool:
    """Whether the car's centre is more than ``margin`` metres beyond a border."""
    return abs(to_middle) > width / 2 + margin


class StuckClock:
    """Counts how long the car has been making less than ``min_speed`` m/s of progress."""

    def __init__(self, min_speed: float, patience: float, grace: float) -> None:
        self.min_speed, self.patience, self.grace = min_speed, patience, grace
        self.slow_for = 0.0

    def reset(self) -> None:
        self.slow_for = 0.0

    def update(self, race_time: float, progress: float, dt: float) -> bool:
        """True once the car has been slow for ``patience`` seconds, not counting the
        first ``grace`` seconds of the race (the start takes a moment)."""
        if race_time < self.grace or progress >= self.min_speed:
            self.slow_for = 0.0
            return False
        self.slow_for += dt
        return self.slow_for >= self.patience


def race_steps(max_episode_seconds: float, frame_skip: int) -> float:
    """Agent steps in ``max_episode_seconds`` of race time, each held for ``frame_skip``
    driver calls (a fraction, and inf or NaN as the seconds are, for the config's check)."""
    return max_episode_seconds * DRIVER_HZ / frame_skip


def episode_step_limit(max_episode_seconds: float, frame_skip: int) -> int:
    """The whole agent steps of ``race_steps``, the last one cut short."""
    return int(math.ceil(race_steps(max_episode_seconds, frame_skip)))
