"""TORCS car racing as a gymnasium environment (paper, Section 5.2 and Supp. "TORCS").

The agent sees only an 84x84 RGB view of the race (see render.py for how it is drawn) and
is rewarded with the distance it makes along the track: each step earns
(v cos(theta) - |v sin(theta)|) * dt metres, v the car's forward speed, theta its angle to
the track's direction, dt the step's simulated time. TORCS calls a driver 50 times per
simulated second; an agent step holds its action for ``frame_skip`` of those calls, and
those calls are what the run counts as frames.

An episode ends (terminated) when the car has driven ``laps`` laps, has left the track, or
has made no progress for ``stuck_seconds``; it is cut (truncated) after
``max_episode_seconds`` of race time. Each reset starts a fresh TORCS process; one that
crashes or stops answering mid-episode cuts the episode and is replaced at the next reset.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from asyncrl.envs.torcs import protocol as p
from asyncrl.envs.torcs.controls import (
    DEFAULT_PEDAL_LEVELS,
    DEFAULT_STEER_LEVELS,
    DRIVER_HZ,
    Command,
    StuckClock,
    continuous_command,
    discrete_table,
    episode_step_limit,
    off_track,
    progress_speed,
)
from asyncrl.envs.torcs.paths import TorcsPaths, require_torcs
from asyncrl.envs.torcs.race import RaceSpec, TorcsRace
from asyncrl.envs.torcs.render import render_view

START_ATTEMPTS = 3


class RaceStartFailed(RuntimeError):
    """TORCS did not start a race in START_ATTEMPTS tries."""


class TorcsEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, spec: RaceSpec, continuous: bool = False, frame_skip: int = 5,
                 screen_size: int = 84, max_episode_seconds: float = 180.0,
                 off_track_margin: float = 1.0, stuck_seconds: float = 3.0,
                 stuck_speed: float = 1.0, start_grace_seconds: float = 3.0,
                 steer_levels: tuple[float, ...] = DEFAULT_STEER_LEVELS,
                 pedal_levels: tuple[float, ...] = DEFAULT_PEDAL_LEVELS,
                 paths: TorcsPaths | None = None, timeout: float = 20.0,
                 render_mode: str | None = None) -> None:
        self.spec_race = spec
        self.continuous = continuous
        self.frame_skip = frame_skip
        self.max_episode_seconds = max_episode_seconds
        self.max_steps = episode_step_limit(max_episode_seconds, frame_skip)
        self.off_track_margin = off_track_margin
        self.stuck = StuckClock(stuck_speed, stuck_seconds, start_grace_seconds)
        self.render_mode = render_mode
        self.observation_space = gym.spaces.Box(0, 255, (3, screen_size, screen_size), np.uint8)
        self.commands: list[Command] = discrete_table(tuple(steer_levels), tuple(pedal_levels))
        if continuous:
            self.action_space: gym.spaces.Space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        else:
            self.action_space = gym.spaces.Discrete(len(self.commands))
        self.race = TorcsRace(paths or require_torcs(), spec, timeout)
        self._screen = np.zeros((screen_size, screen_size, 3), dtype=np.uint8)
        self.state: p.CarState | None = None
        self.restarts = 0

    # -- episode -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)  # TORCS itself is deterministic: nothing to draw
        for attempt in range(START_ATTEMPTS):
            try:
                self.track = self.race.start()
                self.state = self.race.link.receive_state()  # type: ignore[union-attr]
                # hold still through the start countdown, in one exchange
                if self.state[p.TIME] < 0:
                    self._exchange(Command(0.0, 0.0, 0.0),
                                   int(math.ceil(-self.state[p.TIME] * DRIVER_HZ)) + 1)
                break
            except p.DriverGone as exc:
                self.restarts += 1
                if attempt == START_ATTEMPTS - 1:
                    raise RaceStartFailed(f"TORCS failed to start a race {START_ATTEMPTS} times: "
                                       f"{exc}") from exc
        self.steps = 0
        self.distance = 0.0
        self.stuck.reset()
        self.end_reason = ""
        return self._observe(), self._info()

    def _exchange(self, command: Command, repeat: int) -> p.CarState:
        link = self.race.link
        if link is None:
            raise p.DriverGone("no race is running")
        link.send_action(command.steer, command.accel, command.brake, repeat)
        self.state = link.receive_state()
        return self.state

    def command(self, action: Any) -> Command:
        if self.continuous:
            return continuous_command(np.asarray(action, dtype=np.float64))
        return self.commands[int(action)]

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        assert self.state is not None, "call reset() before step()"
        before = self.state[p.TIME]
        try:
            state = self._exchange(self.command(action), self.frame_skip)
        except p.DriverGone:
            # the episode cannot go on without its race; the next reset starts a new TORCS
            self.restarts += 1
            self.race.stop()
            self.end_reason = "torcs_restarted"
            return self._observe(), 0.0, False, True, self._info()
        dt = max(state[p.TIME] - before, 0.0)
        progress = progress_speed(state[p.SPEED_X], state[p.ANGLE])
        reward = progress * dt
        self.distance += reward
        self.steps += 1
        terminated = True
        if off_track(state[p.TO_MIDDLE], state[p.WIDTH], self.off_track_margin):
            self.end_reason = "off_track"
        elif self.stuck.update(state[p.TIME], progress, dt):
            self.end_reason = "stuck"
        elif self.laps_completed >= self.spec_race.laps:
            self.end_reason = "laps"
        else:
            terminated = False
        truncated = not terminated and self.steps >= self.max_steps
        if truncated:
            self.end_reason = "time_limit"
        if terminated or truncated:
            self.race.stop()
        return self._observe(), reward, terminated, truncated, self._info()

    @property
    def laps_completed(self) -> int:
        """TORCS counts the lap being driven, from 1 once the car crosses the start line."""
        assert self.state is not None
        return max(int(self.state[p.LAPS]) - 1, 0)

    # -- pictures ----------------------------------------------------------------------
    def nearest_sample(self) -> int:
        assert self.state is not None
        index = int(np.searchsorted(self.track.distance, self.state[p.DIST_FROM_START])) - 1
        return index % len(self.track.distance)

    def _observe(self) -> np.ndarray:
        state = self.state
        assert state is not None
        others = state.opponents
        boxes = np.ascontiguousarray(others[:, [p.OPP_X, p.OPP_Y, p.OPP_Z, p.OPP_YAW,
                                                p.OPP_LENGTH, p.OPP_WIDTH]])
        render_view(self._screen, self.track.left, self.track.right, self.nearest_sample(),
                    state[p.X], state[p.Y], state[p.Z], state[p.YAW], state[p.CAR_LENGTH],
                    state[p.CAR_WIDTH], boxes)
        return np.ascontiguousarray(self._screen.transpose(2, 0, 1))

    def _info(self) -> dict[str, Any]:
        state = self.state
        assert state is not None
        return {"distance": self.distance, "laps": self.laps_completed,
                "race_time": state[p.TIME], "speed": state[p.SPEED_X],
                "damage": state[p.DAMAGE], "opponents": int(state[p.N_OPPONENTS]),
                "end_reason": self.end_reason, "torcs_restarts": self.restarts}

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        return self._screen.copy()

    def close(self) -> None:
        self.race.close()
