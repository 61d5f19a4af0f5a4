"""The real TORCS: needs `asyncrl-torcs install` first; run with `nox -s torcs`
(pytest -m torcs). tests/envs/test_torcs.py covers what needs no TORCS."""

from __future__ import annotations

import contextlib
import csv
import os
import signal
import subprocess

import numpy as np
import pytest

from asyncrl.algos import algorithm_class
from asyncrl.config.checks import validate
from asyncrl.envs import make_env
from asyncrl.envs.torcs import protocol as p
from asyncrl.envs.torcs.install import build_driver
from asyncrl.envs.torcs.paths import TorcsPaths, require_torcs
from asyncrl.envs.torcs.scripted import ScriptedDriver
from asyncrl.nets import build_model
from tests.conftest import QUICK, compose, run_cli

pytestmark = pytest.mark.torcs

THROTTLE, BRAKE = 3, 5  # steer 0 with pedal 1.0, and with pedal -0.5, in the default table


@contextlib.contextmanager
def racing(setting: str, *overrides: str):
    """The setting's config and env; the env (and its TORCS) closed afterwards."""
    cfg = compose(f"env=torcs/{setting}", *overrides)
    validate(cfg)
    env = make_env(cfg.env)
    try:
        yield cfg, env
    finally:
        env.close()


def test_driver_module_builds(tmp_path):
    installed = require_torcs()
    paths = TorcsPaths(tmp_path, installed.system)
    (tmp_path / "include").symlink_to(installed.include)
    build_driver(paths)
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(paths.driver)],
                             capture_output=True, text=True, check=True).stdout
    assert " T asyncrl" in symbols  # the entry point TORCS looks up by the module's name


@pytest.mark.parametrize("setting", ["slow_car", "slow_car_bots", "fast_car", "fast_car_bots"])
def test_every_setting_validates_and_builds_a_model(setting):
    with racing(setting) as (cfg, env):
        model = build_model(cfg, env.observation_space, env.action_space,
                            algorithm_class(cfg.algo.name).head)
        assert env.observation_space.shape == (3, 84, 84) and env.action_space.n == 9
        assert sum(w.numel() for w in model.parameters()) > 0


def test_a_race_starts_and_the_view_changes_as_the_car_moves():
    with racing("slow_car") as (_, env):
        first, info = env.reset()
        assert first.shape == (3, 84, 84) and first.dtype == np.uint8
        assert info["speed"] == pytest.approx(0.0, abs=0.5)
        for _ in range(30):
            obs, _, terminated, truncated, info = env.step(THROTTLE)
            assert not (terminated or truncated)
        assert info["speed"] > 8.0, "3 s of full throttle must get the car going"
        assert (obs != first).mean() > 0.05


def test_reward_is_the_distance_made_along_the_track():
    # the scripted driver steers continuously
    with racing("fast_car", "network=gaussian") as (_, env):
        env.reset()
        driver = ScriptedDriver(env)
        start = env.state[p.DIST_RACED]
        total = 0.0
        for _ in range(100):
            _, reward, terminated, truncated, _ = env.step(driver.act())
            total += reward
            assert not (terminated or truncated)
        travelled = env.state[p.DIST_RACED] - start  # TORCS's own count along the track
        assert travelled > 200.0
        assert total == pytest.approx(travelled, rel=0.1)


def test_opponents_race_and_show_in_the_view_when_they_pass():
    with racing("fast_car_bots") as (_, env):
        _, info = env.reset()
        assert info["opponents"] == 3
        seen = 0
        for _ in range(60):  # we brake on the grid; the robots drive past
            obs, *_ = env.step(BRAKE)
            blue = (obs[2] > 150) & (obs[0] < 100)
            seen = max(seen, int(blue.sum()))
        others = env.state.opponents
        assert (np.abs(others[:, p.OPP_DIST] - env.state[p.DIST_FROM_START]) > 30).any()
        assert seen > 10, "a robot driving past must appear in the view"


def test_a_killed_torcs_cuts_the_episode_and_the_next_reset_starts_a_new_one():
    with racing("slow_car") as (_, env):
        env.reset()
        env.step(THROTTLE)
        os.killpg(env.race.process.pid, signal.SIGKILL)
        _, reward, terminated, truncated, info = env.step(THROTTLE)
        assert truncated and not terminated and info["end_reason"] == "torcs_restarted"
        env.reset()
        for _ in range(20):
            env.step(THROTTLE)
        assert env.state[p.SPEED_X] > 3.0 and env.race.alive()
        local = env.race._local
        assert local is not None and (local / "race.xml").exists()
    assert env.race.process is None and not local.exists()


@pytest.mark.parametrize("overrides", [
    ["algo=a3c"],
    ["algo=a3c", "network=gaussian"],
    ["algo=nstep_q", "network=ff"],
    ["algo=a3c", "envs_per_worker=2"],  # two races per worker, one TORCS process each
])
def test_training_through_the_cli_on_real_torcs(tmp_path, overrides):
    run_dir = tmp_path / "run"
    # races of at most 10 s (500 frames): every race ends at least once within the run's
    # 3,000 frames, however a random policy drives (up to 4 races: 750 frames each)
    result = run_cli(["env=torcs/slow_car", "env.max_episode_seconds=10", "workers=2",
                      "total_frames=3000", *QUICK, *overrides, f"hydra.run.dir={run_dir}"],
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    with open(run_dir / "episodes.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and {r["worker"] for r in rows} == {"0", "1"}
    leftover = subprocess.run(["pgrep", "-f", "torcs-bin.*asyncrl-torcs-"],
                              capture_output=True, text=True).stdout.split()
    assert not leftover, "no TORCS process may outlive its run"
