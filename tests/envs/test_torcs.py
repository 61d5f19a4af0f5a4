"""TORCS without TORCS: the action table, the reward, the episode's end, the race files,
the view, the wire format, the env's logic against a simulated driver, the settings'
configs, and the error when TORCS is missing. tests/envs/test_torcs_race.py runs the real game."""

from __future__ import annotations

import math
import os
import socket
import struct
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from asyncrl.config.checks import validate
from asyncrl.envs.torcs import protocol as p
from asyncrl.envs.torcs import race as race_module
from asyncrl.envs.torcs.controls import (
    StuckClock,
    continuous_command,
    discrete_table,
    off_track,
    pedal_command,
    progress_speed,
)
from asyncrl.envs.torcs.race import Opponent, RaceSpec, driver_xml, race_xml
from asyncrl.envs.torcs.render import render_view
from asyncrl.errors import UserError
from tests.config.test_config import options
from tests.conftest import compose, run_cli

SETTINGS = ["slow_car", "slow_car_bots", "fast_car", "fast_car_bots"]


# -- actions and reward ----------------------------------------------------------------
def test_discrete_actions_are_every_steer_pedal_pair_with_pedals_split():
    table = discrete_table((0.5, 0.0, -0.5), (1.0, 0.0, -0.5))
    assert len(table) == 9
    assert (table[0].steer, table[0].accel, table[0].brake) == (0.5, 1.0, 0.0)
    assert (table[2].steer, table[2].accel, table[2].brake) == (0.5, 0.0, 0.5)
    assert (table[4].steer, table[4].accel, table[4].brake) == (0.0, 0.0, 0.0)
    assert (table[8].steer, table[8].accel, table[8].brake) == (-0.5, 0.0, 0.5)


def test_continuous_actions_clip_to_the_cars_range():
    command = continuous_command(np.array([2.0, -3.0]))
    assert (command.steer, command.accel, command.brake) == (1.0, 0.0, 1.0)
    command = pedal_command(-0.25, 0.75)
    assert (command.steer, command.accel, command.brake) == (-0.25, 0.75, 0.0)


def test_progress_speed_on_hand_worked_angles():
    assert progress_speed(20.0, 0.0) == pytest.approx(20.0)
    # 30 degrees: 20 cos 30 - 20 sin 30 = 17.3205 - 10
    assert progress_speed(20.0, math.pi / 6) == pytest.approx(7.320508, abs=1e-6)
    assert progress_speed(20.0, -math.pi / 6) == pytest.approx(7.320508, abs=1e-6)
    assert progress_speed(20.0, math.pi / 4) == pytest.approx(0.0, abs=1e-9)
    assert progress_speed(20.0, math.pi) == pytest.approx(-20.0)


def test_off_track_counts_the_margin_beyond_a_border():
    assert not off_track(7.9, 15.0, 1.0)
    assert off_track(8.6, 15.0, 1.0)
    assert off_track(-8.6, 15.0, 1.0)


def test_stuck_clock_waits_out_the_start_and_its_patience():
    clock = StuckClock(min_speed=1.0, patience=1.0, grace=2.0)
    assert not clock.update(1.5, 0.0, 0.5)  # still in the start's grace time
    assert not clock.update(2.5, 0.0, 0.5)
    assert not clock.update(3.0, 5.0, 0.5)  # moving again: the count starts over
    assert not clock.update(3.5, 0.0, 0.5)
    assert clock.update(4.0, 0.5, 0.5)


# -- race files --------------------------------------------------------------------------
def test_race_file_puts_our_driver_first_and_gives_torcs_one_lap_more():
    spec = RaceSpec("g-track-1", "road", "p406", ("bt/3", "berniw/0"), laps=2)
    root = ET.fromstring(race_xml(spec))

    def section(node, name):
        return next(s for s in node.findall("section") if s.get("name") == name)

    track = section(section(root, "Tracks"), "1")
    assert {a.get("name"): a.get("val") for a in track} == {"name": "g-track-1",
                                                              "category": "road"}
    laps = [a for a in section(root, "Quick Race") if a.get("name") == "laps"]
    assert laps[0].get("val") == "3"
    drivers = [s for s in section(root, "Drivers").findall("section")]
    modules = [[a.get("val") for a in d if a.get("name") == "module"][0] for d in drivers]
    indices = [[a.get("val") for a in d if a.get("name") == "idx"][0] for d in drivers]
    assert modules == ["asyncrl", "bt", "berniw"] and indices == ["0", "3", "0"]
    robot = ET.fromstring(driver_xml("car1-trb1"))
    assert robot.get("type") == "robotdef"
    assert 'val="car1-trb1"' in driver_xml("car1-trb1")


def test_opponents_must_name_module_and_index():
    assert Opponent.parse("inferno/1") == Opponent("inferno", 1)
    for bad in ("inferno", "inferno/x", "/2"):
        with pytest.raises(ValueError, match="module/index"):
            Opponent.parse(bad)


# -- the view ------------------------------------------------------------------------
def straight_track(length: float = 400.0, width: float = 12.0):
    xs = np.arange(0.0, length, 2.0)
    left = np.stack([xs, np.full_like(xs, width / 2), np.zeros_like(xs)], axis=1)
    right = np.stack([xs, np.full_like(xs, -width / 2), np.zeros_like(xs)], axis=1)
    return left, right


def view(x: float, opponents=None, yaw: float = 0.0) -> np.ndarray:
    left, right = straight_track()
    screen = np.zeros((84, 84, 3), np.uint8)
    boxes = np.zeros((0, 6)) if opponents is None else np.asarray(opponents, float)
    render_view(screen, left, right, int(x // 2), x, 0.0, 0.4, yaw, 4.5, 1.9, boxes)
    return screen


def test_view_shows_sky_above_road_ahead_and_our_car():
    screen = view(100.0)
    assert tuple(screen[2, 42]) == (110, 160, 220)  # sky
    grey = screen[38, 42]
    assert grey[0] == grey[1] and 85 <= grey[0] <= 110  # the road straight ahead
    assert tuple(screen[70, 42]) in ((200, 30, 30), (240, 80, 60))  # our car, from behind
    assert tuple(screen[40, 5]) == (60, 125, 50)  # grass beside the road in the distance
    road = {(105, 105, 110), (90, 90, 95)}
    assert tuple(screen[80, 5]) in road and tuple(screen[80, 78]) in road  # road under us


def test_view_moves_with_the_car_and_draws_other_cars():
    assert (view(100.0) != view(103.0)).any(), "driving forward must change the view"
    ahead = view(100.0, opponents=[[112.0, 4.0, 0.4, 0.0, 4.5, 1.9]])
    blue = (ahead[..., 2] > 150) & (ahead[..., 0] < 100)
    assert blue.sum() > 20, "a car 12 m ahead, beside our line, must show"
    behind = view(100.0, opponents=[[60.0, 0.0, 0.4, 0.0, 4.5, 1.9]])
    assert not ((behind[..., 2] > 150) & (behind[..., 0] < 100)).any()


def test_view_turns_with_the_car():
    straight, turned = view(100.0), view(100.0, yaw=0.5)
    assert (straight != turned).mean() > 0.1


# -- wire format -----------------------------------------------------------------------
SECRET = bytes(range(p.SECRET_BYTES))


def greeting(secret: bytes = SECRET, magic: int = p.MAGIC, version: int = p.VERSION) -> bytes:
    return struct.pack(f"=2i{p.SECRET_BYTES}s", magic, version, secret)


def fake_track(n: int = 3) -> bytes:
    points = np.arange(n * 7, dtype=np.float64)
    return struct.pack("=i2d", n, 2057.5, 15.0) + points.tobytes()


def test_link_reads_track_and_state_and_sends_actions():
    ours, theirs = socket.socketpair()
    link = p.DriverLink(ours, timeout=5)
    state = np.zeros(p.STATE_DOUBLES)
    state[p.SPEED_X], state[p.N_OPPONENTS] = 12.5, 2
    state[p.OWN_DOUBLES + p.OPP_X] = 7.0
    theirs.sendall(greeting() + fake_track() + state.tobytes())
    link.greet(SECRET)
    track = link.receive_track()
    assert track.left.shape == (3, 3) and track.length == 2057.5
    assert track.right[1].tolist() == [10.0, 11.0, 12.0] and track.distance[2] == 20.0
    got = link.receive_state()
    assert got[p.SPEED_X] == 12.5 and got.opponents.shape == (2, p.OPPONENT_DOUBLES)
    assert got.opponents[0, p.OPP_X] == 7.0
    link.send_action(0.25, 1.0, 0.0, 5)
    assert struct.unpack("=4d", theirs.recv(32)) == (0.25, 1.0, 0.0, 5.0)
    theirs.close()
    with pytest.raises(p.DriverGone, match="closed"):
        link.receive_state()


@pytest.mark.parametrize("hello, refusal", [
    (greeting(secret=bytes(p.SECRET_BYTES)), p.NotOurDriver),   # the wrong secret
    (greeting(magic=0x1234), p.NotOurDriver),                   # not our protocol at all
    (b"GET / HTTP/1.0\r\n\r\n" + bytes(8), p.NotOurDriver),
    (greeting(version=1), p.DriverGone),  # our driver, built before the secret: rebuild it
])
def test_greeting_refuses_all_but_this_races_driver(hello, refusal):
    ours, theirs = socket.socketpair()
    theirs.sendall(hello)
    with pytest.raises(refusal) as caught:
        p.DriverLink(ours, timeout=5).greet(SECRET)
    if refusal is p.DriverGone:
        assert "asyncrl-torcs install" in str(caught.value)


def test_link_times_out_when_the_driver_goes_quiet():
    ours, _theirs = socket.socketpair()
    with pytest.raises(p.DriverGone, match="stopped answering"):
        p.DriverLink(ours, timeout=0.2).receive_state()


def test_link_bounds_every_length_it_reads_from_the_wire():
    ours, theirs = socket.socketpair()
    # a track of 2**31 - 1 points would be a ~120 GB buffer: refused before allocating it
    theirs.sendall(struct.pack("=i2d", 2**31 - 1, 1.0, 1.0))
    with pytest.raises(p.DriverGone, match="claims a track of 2147483647 points"):
        p.DriverLink(ours, timeout=5).receive_track()
    ours, theirs = socket.socketpair()
    state = np.zeros(p.STATE_DOUBLES)
    state[p.N_OPPONENTS] = 1e9
    theirs.sendall(state.tobytes())
    with pytest.raises(p.DriverGone, match="claims 1000000000.0 opponents"):
        p.DriverLink(ours, timeout=5).receive_state()


def test_the_race_port_takes_only_the_connection_with_the_secret(monkeypatch):
    """Strangers connect first (one silent, one with a guessed secret, one with a fake track);
    the race still reads the real driver's track, and says how many it turned away."""
    monkeypatch.setattr(race_module, "GREETING_SECONDS", 0.5)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    address = server.getsockname()
    strangers = [socket.create_connection(address) for _ in range(3)]
    # a guessed secret, then the header of a track too big to read (nothing reads it)
    strangers[1].sendall(greeting(secret=b"x" * p.SECRET_BYTES)
                         + struct.pack("=i2d", p.MAX_TRACK_POINTS, 1.0, 1.0))
    strangers[2].sendall(greeting(secret=SECRET[::-1]))
    driver = socket.create_connection(address)
    driver.sendall(greeting() + fake_track(4))
    link = race_module.accept_driver(server, SECRET, timeout=10)
    assert link.receive_track().left.shape == (4, 3)
    for conn in (*strangers, driver):
        conn.close()
    link.close()
    with pytest.raises(p.DriverGone, match=r"within 1 s \(1 connection\(s\) without the race's"):
        lone = socket.create_connection(address)
        lone.sendall(greeting(secret=bytes(p.SECRET_BYTES)))
        race_module.accept_driver(server, SECRET, timeout=1)
    lone.close()
    server.close()


# -- the env's logic against a simulated driver -----------------------------------------
class SimulatedRace:
    """Plays the driver module's side: a car on a straight 400 m track that moves at its
    throttle x 30 m/s, starting in a 1 s countdown; it can be told to die."""

    def __init__(self, die_after: int | None = None) -> None:
        self.die_after = die_after
        self.link = None
        self.starts = 0

    def start(self):
        self.stop()
        self.starts += 1
        ours, theirs = socket.socketpair()
        left, right = straight_track()
        points = np.concatenate([left, right, left[:, :1]], axis=1)
        track = struct.pack("=i2d", len(points), 400.0, 12.0)
        theirs.sendall(greeting() + track + points.tobytes())
        self._thread = threading.Thread(target=self._drive, args=(theirs,), daemon=True)
        self._thread.start()
        self.link = p.DriverLink(ours, timeout=5)
        self.link.greet(SECRET)
        return self.link.receive_track()

    def _drive(self, conn):
        t, x, speed, exchanges = -1.0, 10.0, 0.0, 0
        with conn:
            while True:
                state = np.zeros(p.STATE_DOUBLES)
                state[[p.TIME, p.X, p.SPEED_X, p.WIDTH, p.DIST_FROM_START]] = (
                    t, x, speed, 12.0, x)
                state[p.LAPS] = 1
                state[p.CAR_LENGTH], state[p.CAR_WIDTH] = 4.5, 1.9
                try:
                    conn.sendall(state.tobytes())
                    data = conn.recv(32)
                except OSError:
                    return
                if len(data) < 32 or (self.die_after is not None
                                      and exchanges >= self.die_after):
                    return
                steer, accel, brake, repeat = struct.unpack("=4d", data)
                for _ in range(int(repeat)):
                    speed = 30.0 * accel if t >= 0 else 0.0
                    x += speed * 0.02
                    t += 0.02
                exchanges += 1

    def stop(self):
        if self.link is not None:
            self.link.close()
            self.link = None

    def close(self):
        self.stop()


def simulated_env(race: SimulatedRace, **kwargs):
    from asyncrl.envs.torcs.env import TorcsEnv
    from asyncrl.envs.torcs.paths import TorcsPaths

    env = TorcsEnv(RaceSpec("straight", "road", "car"), paths=TorcsPaths(Path("."), Path(".")),
                   **kwargs)
    env.race = race
    return env


def test_env_skips_the_countdown_and_pays_metres_along_the_track():
    env = simulated_env(SimulatedRace(), frame_skip=5, max_episode_seconds=2.0)
    obs, info = env.reset()
    assert obs.shape == (3, 84, 84) and obs.dtype == np.uint8
    assert info["race_time"] >= 0  # the countdown went by in one exchange
    full_throttle = 1 * 3 + 0  # steer 0 (second), pedal 1.0 (first) in the default table
    assert env.commands[full_throttle].accel == 1.0 and env.commands[full_throttle].steer == 0
    obs2, reward, terminated, truncated, info = env.step(full_throttle)
    # 30 m/s for 5 driver steps of 0.02 s = 3 m
    assert reward == pytest.approx(3.0)
    assert not terminated and not truncated and (obs2 != obs).any()
    steps = 1
    while not truncated:
        _, reward, terminated, truncated, info = env.step(full_throttle)
        steps += 1
        assert not terminated
    assert steps == env.max_steps == 20 and info["end_reason"] == "time_limit"
    assert info["distance"] == pytest.approx(60.0)


def test_env_ends_a_stuck_episode_and_cuts_one_whose_torcs_died():
    env = simulated_env(SimulatedRace(), stuck_seconds=0.5, start_grace_seconds=0.0)
    env.reset()
    coast = 1 * 3 + 1  # steer 0, pedal 0
    terminated, steps = False, 0
    while not terminated:
        _, reward, terminated, truncated, info = env.step(coast)
        steps += 1
        assert reward == 0.0 and not truncated
    assert info["end_reason"] == "stuck" and steps == 5  # 0.5 s at 10 steps per second
    race = SimulatedRace(die_after=3)
    env = simulated_env(race)
    env.reset()
    for _ in range(2):
        assert not env.step(coast)[3]
    _, reward, terminated, truncated, info = env.step(coast)
    assert truncated and not terminated and info["end_reason"] == "torcs_restarted"
    assert info["torcs_restarts"] == 1
    env.reset()
    assert race.starts == 2


# -- configs and the missing-TORCS error ------------------------------------------------
def test_the_four_settings_compose_with_their_cars_and_opponents():
    torcs = sorted(e for e in options("env") if e.startswith("torcs/"))
    assert torcs == sorted(f"torcs/{s}" for s in SETTINGS)
    for setting in SETTINGS:
        cfg = compose(f"env=torcs/{setting}")
        assert cfg.env.setting == setting and cfg.network.name == "lstm"
        assert cfg.env.car == ("p406" if setting.startswith("slow") else "car1-trb1")
        assert len(cfg.env.opponents) == (3 if setting.endswith("bots") else 0)
        assert cfg.env.policy_network == "lstm"
    assert compose("env=torcs/fast_car", "network=gaussian").env.policy_network == "gaussian"


@pytest.mark.parametrize(("overrides", "fragment"), [
    (["env.laps=0"], "env.laps"),
    (["env.max_episode_seconds=inf"], "env.max_episode_seconds=inf"),
    (["env.max_episode_seconds=-3"], "env.max_episode_seconds=-3"),
    (["env.max_episode_seconds=inf", "algo.episode_updates=true"], "env.max_episode_seconds=inf"),
    (["env.frame_skip=0", "algo.episode_updates=true"], "env.frame_skip must be >= 1"),
    (["env.steer_levels=[2.0]"], "[-1, 1]"),
    (["env.opponents=[bt]"], "module/index"),
    (["algo=nstep_q", "network=gaussian"], "one Q-value per discrete action"),
])
def test_impossible_torcs_settings_are_refused_before_looking_for_torcs(overrides, fragment):
    with pytest.raises(UserError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        validate(compose("env=torcs/slow_car", *overrides))


def test_missing_driver_module_is_one_line_naming_the_setup_command(tmp_path):
    env = {"ASYNCRL_TORCS_HOME": str(tmp_path / "nothing")}
    result = run_cli(["env=torcs/slow_car", "workers=1", "total_frames=100",
                      f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path, extra_env=env)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "asyncrl-torcs install" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()


def test_a_torcs_that_never_connects_is_killed_not_left_behind(tmp_path, monkeypatch):
    from asyncrl.envs.torcs.paths import TorcsPaths
    from asyncrl.envs.torcs.race import TorcsRace

    fake = tmp_path / "torcs-bin"
    fake.write_text("#!/bin/sh\nsleep 60\n")
    fake.chmod(0o755)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "raceengine.xml").write_text("<params/>")

    class FakePaths(TorcsPaths):
        @property
        def binary(self) -> Path:
            return fake

        @property
        def data(self) -> Path:
            return tmp_path

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    race = TorcsRace(FakePaths(tmp_path, tmp_path), RaceSpec("t", "road", "car"), timeout=0.5)
    with pytest.raises(p.DriverGone, match="did not start a race"):
        race.start()
    assert race.process is None
    assert not list(scratch.iterdir()), "the race's directory goes with its process"


def test_the_source_download_folder_is_never_world_writable(tmp_path):
    import pwd
    import stat

    from asyncrl.envs.torcs.install import _let_apt_download_into

    folder = tmp_path / "src"
    folder.mkdir(mode=0o700)
    _let_apt_download_into(str(folder))
    info = folder.stat()
    assert not info.st_mode & (stat.S_IWOTH | stat.S_IWGRP)
    try:
        apt_uid = pwd.getpwnam("_apt").pw_uid
    except KeyError:
        apt_uid = None
    if os.geteuid() != 0 or apt_uid is None:
        pytest.skip("the folder goes to _apt only where it exists and this process is root")
    assert info.st_uid == apt_uid  # apt downloads as its own user, into this folder only
