"""MuJoCo tasks (state and pixels): the gymnasium API, seeding, clipping for the simulator."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from asyncrl.config.checks import validate
from asyncrl.envs import make_env
from tests.conftest import CONF, actions_the_simulator_receives, cli_env, compose

TASKS = sorted(p.stem for p in (CONF / "env" / "mujoco").glob("*.yaml")
               if not p.name.startswith("_"))


def test_the_papers_tasks_have_configs():
    assert {"inverted_pendulum", "inverted_double_pendulum", "reacher", "half_cheetah",
            "hopper", "walker2d", "swimmer", "ant", "humanoid"} <= set(TASKS)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("task", TASKS)
def test_task_passes_the_env_checker_with_float32_observations(task):
    cfg = compose(f"env=mujoco/{task}")
    validate(cfg)
    env = make_env(cfg.env)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32 and obs.shape == env.observation_space.shape


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_same_seed_same_trajectory():
    cfg = compose("env=mujoco/hopper")

    def trajectory(seed):
        env = make_env(cfg.env)
        obs, _ = env.reset(seed=seed)
        out = [obs]
        rng = np.random.default_rng(0)
        for _ in range(20):
            obs, *_ = env.step(rng.uniform(-1, 1, 3).astype(np.float32))
            out.append(obs)
        return np.stack(out)

    np.testing.assert_array_equal(trajectory(5), trajectory(5))
    assert not np.array_equal(trajectory(5), trajectory(6))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_out_of_bounds_actions_reach_the_simulator_clipped():
    # MuJoCo would clamp InvertedPendulum's control to ±3 itself (ctrllimited), so what is
    # checked is the action the simulator's step receives, and the caller's array untouched
    cfg = compose("env=mujoco/inverted_pendulum")
    env = make_env(cfg.env)
    env.reset(seed=1)
    received = actions_the_simulator_receives(env)
    sample = np.array([50.0], np.float32)
    env.step(sample)
    env.step(np.array([-7.0], np.float32))
    assert [a.tolist() for a in received] == [[3.0], [-3.0]]  # the task's bounds
    assert sample.tolist() == [50.0]  # the policy's sample, as the rollout stores it


PIXEL_TASKS = sorted(p.stem for p in (CONF / "env" / "mujoco" / "pixels").glob("*.yaml")
                     if not p.name.startswith("_"))


def test_the_papers_pixel_tasks_have_configs():
    assert {"pendulum", "point_mass", "gripper"} <= set(PIXEL_TASKS)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("task", PIXEL_TASKS)
def test_pixel_task_passes_the_env_checker_and_its_frames_move(task):
    cfg = compose(f"env=mujoco/pixels/{task}")
    validate(cfg)
    assert cfg.network.name == "gaussian"
    env = make_env(cfg.env)
    check_env(env, skip_render_check=True)
    first, _ = env.reset(seed=0)
    assert first.shape == (3, 84, 84) and first.dtype == np.uint8
    rng = np.random.default_rng(0)
    frames = [env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))[0]
              for _ in range(10)]
    assert any(not np.array_equal(first, f) for f in frames)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pixel_task_is_seeded():
    cfg = compose("env=mujoco/pixels/point_mass")
    a, b, c = make_env(cfg.env), make_env(cfg.env), make_env(cfg.env)
    np.testing.assert_array_equal(a.reset(seed=3)[0], b.reset(seed=3)[0])
    assert not np.array_equal(a.reset(seed=3)[0], c.reset(seed=4)[0])


def test_a_broken_headless_renderer_is_one_line_naming_what_to_install(tmp_path):
    env = {**cli_env(), "MUJOCO_GL": "no_such_backend"}
    result = subprocess.run([sys.executable, "-m", "asyncrl", "env=mujoco/pixels/pendulum"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "render headless" in lines[0] and "libegl1" in lines[0], (
        result.stderr)
    assert not (tmp_path / "outputs").exists()
