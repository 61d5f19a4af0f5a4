"""The wire format between a worker and the driver module inside TORCS (driver/asyncrl.cpp).

Both ends run on one machine, so numbers travel in native byte order. The driver connects
once per race, proves it is the driver of this race with the race's secret, sends the
track's geometry, then one state per agent step, and waits for the action to hold for the
next ``repeat`` simulation steps.

The port is open to every local user, so the first connection is not trusted: the worker
hands TORCS a random secret through its environment (readable only by the same user) and
drops any connection that does not present it.
"""

from __future__ import annotations

import hmac
import socket
import struct
from dataclasses import dataclass
from functools import cached_property

import numpy as np

MAGIC = 0x41524C54
VERSION = 2  # 2: the greeting carries the race's secret
SECRET_BYTES = 16
SECRET_ENV = "ASYNCRL_TORCS_SECRET"  # hex, read by the driver
PORT_ENV = "ASYNCRL_TORCS_PORT"
MAX_OPPONENTS = 16
MAX_TRACK_POINTS = 50_000  # samples every ~2 m: a 100 km track
OWN_DOUBLES = 24
OPPONENT_DOUBLES = 8
STATE_DOUBLES = OWN_DOUBLES + MAX_OPPONENTS * OPPONENT_DOUBLES

# indices into a state vector (the order in which send_state fills it)
TIME, X, Y, Z, YAW, SPEED_X, SPEED_Y, ANGLE, TO_MIDDLE, WIDTH = range(10)
DIST_FROM_START, DIST_RACED, LAPS, DAMAGE, RPM, GEAR, RACE_POS, CAR_STATE = range(10, 18)
CAR_LENGTH, CAR_WIDTH, PITCH, ROLL, LAP_TIME, N_OPPONENTS = range(18, 24)
# per opponent, from OWN_DOUBLES on
OPP_X, OPP_Y, OPP_Z, OPP_YAW, OPP_LENGTH, OPP_WIDTH, OPP_DIST, OPP_STATE = range(8)

_GREETING = struct.Struct(f"=2i{SECRET_BYTES}s")
_TRACK_HEADER = struct.Struct("=i2d")
_ACTION = struct.Struct("=4d")


class DriverGone(ConnectionError):
    """TORCS closed the connection or stopped answering."""


class NotOurDriver(ConnectionError):
    """A connection to the race's port that is not this race's driver."""


@dataclass(frozen=True)
class TrackGeometry:
    """Both borders of the track (x, y, z), sampled every ~2 m along the centre line, and
    each sample's distance from the start line."""

    left: np.ndarray       # (n, 3)
    right: np.ndarray      # (n, 3)
    distance: np.ndarray   # (n,)
    length: float
    width: float

    @cached_property  # the scripted driver reads it every step
    def centre(self) -> np.ndarray:
        return (self.left + self.right) / 2


@dataclass(frozen=True)
class CarState:
    """One state message: the driven car and up to MAX_OPPONENTS others."""

    values: np.ndarray  # (STATE_DOUBLES,)

    def __getitem__(self, index: int) -> float:
        return float(self.values[index])

    @property
    def opponents(self) -> np.ndarray:
        """(n, OPPONENT_DOUBLES): one row per other car in the race."""
        n = int(self.values[N_OPPONENTS])
        return self.values[OWN_DOUBLES:].reshape(MAX_OPPONENTS, OPPONENT_DOUBLES)[:n]


class DriverLink:
    """The worker's end of one race's connection."""

    def __init__(self, conn: socket.socket, timeout: float) -> None:
        if conn.family == socket.AF_INET:  # one small message per step: send it now
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.settimeout(timeout)
        self.conn = conn
        self._state = bytearray(8 * STATE_DOUBLES)

    def _recv_into(self, view: memoryview) -> None:
        while len(view):
            try:
                n = self.conn.recv_into(view)
            except (TimeoutError, OSError) as exc:
                raise DriverGone(f"TORCS stopped answering ({exc})") from exc
            if n == 0:
                raise DriverGone("TORCS closed the connection")
            view = view[n:]

    def greet(self, secret: bytes) -> None:
        """Read the greeting: NotOurDriver unless it carries this race's secret."""
        greeting = bytearray(_GREETING.size)
        try:
            self._recv_into(memoryview(greeting))
        except DriverGone as exc:
            raise NotOurDriver(f"a connection sent no greeting ({exc})") from exc
        magic, version, presented = _GREETING.unpack(greeting)
        if magic != MAGIC:
            raise NotOurDriver("a connection did not speak the driver's protocol")
        if version != VERSION:
            raise DriverGone(f"the TORCS driver speaks protocol {version}, not {VERSION}: "
                             "rebuild it with `asyncrl-torcs install`")
        if not hmac.compare_digest(presented, secret):
            raise NotOurDriver("a connection presented the wrong secret")

    def receive_track(self) -> TrackGeometry:
        header = bytearray(_TRACK_HEADER.size)
        self._recv_into(memoryview(header))
        n_points, length, width = _TRACK_HEADER.unpack(header)
        if not 2 <= n_points <= MAX_TRACK_POINTS:  # a length read from the wire: bound it
            raise DriverGone(f"the TORCS driver claims a track of {n_points} points; a real "
                             f"one has 2 to {MAX_TRACK_POINTS:,}")
        points = bytearray(8 * 7 * n_points)
        self._recv_into(memoryview(points))
        table = np.frombuffer(points, dtype=np.float64).reshape(n_points, 7)
        return TrackGeometry(left=table[:, 0:3].copy(), right=table[:, 3:6].copy(),
                             distance=table[:, 6].copy(), length=length, width=width)

    def receive_state(self) -> CarState:
        self._recv_into(memoryview(self._state))
        state = CarState(np.frombuffer(self._state, dtype=np.float64).copy())
        opponents = state[N_OPPONENTS]
        if not (0 <= opponents <= MAX_OPPONENTS and float(opponents).is_integer()):
            raise DriverGone(f"the TORCS driver claims {opponents} opponents; at most "
                             f"{MAX_OPPONENTS}")
        return state

    def send_action(self, steer: float, accel: float, brake: float, repeat: int) -> None:
        try:
            self.conn.sendall(_ACTION.pack(steer, accel, brake, float(repeat)))
        except OSError as exc:
            raise DriverGone(f"TORCS closed the connection ({exc})") from exc

    def close(self) -> None:
        self.conn.close()
