"""The maze task: gymnasium API, seeding, reward accounting, the view, evaluation mazes."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from asyncrl.config.checks import validate
from asyncrl.envs import make_env
from asyncrl.envs.maze import ACTIONS, MazeEnv
from asyncrl.envs.maze.raycast import CEILING, FLOOR
from tests.conftest import CONF, compose

LEVELS = sorted(p.stem for p in (CONF / "env" / "maze").glob("*.yaml")
                if not p.name.startswith("_"))
FORWARD = [name for name, *_ in ACTIONS].index("forward")
TURN_LEFT = [name for name, *_ in ACTIONS].index("turn_left")


def maze(level: str = "small", **overrides) -> MazeEnv:
    cfg = compose(f"env=maze/{level}", *[f"env.{k}={v}" for k, v in overrides.items()])
    validate(cfg)
    env = make_env(cfg.env)
    assert isinstance(env, MazeEnv)
    return env


def test_levels_and_their_defaults():
    assert {"small", "medium", "large"} <= set(LEVELS)
    cfg = compose("env=maze/medium")
    assert cfg.network.name == "lstm"
    env = maze("medium")
    assert env.max_steps == 900  # 60 s x 60 fps / 4 frames per step


@pytest.mark.parametrize("level", LEVELS)
def test_level_passes_the_env_checker(level):
    env = maze(level)
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, 84, 84) and obs.dtype == np.uint8
    assert "maze_seed" in info


def test_same_seed_same_mazes_and_frames_and_a_new_maze_each_episode():
    def run(seed):
        env = maze()
        first, info = env.reset(seed=seed)
        frames = [first] + [env.step(i % len(ACTIONS))[0] for i in range(30)]
        _, second = env.reset()
        return np.stack(frames), info["maze_seed"], second["maze_seed"]

    a, b = run(4), run(4)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1:] == b[1:]
    assert a[1] != a[2]  # the next episode is a different maze
    assert run(5)[1] != a[1]


def _place(env: MazeEnv, x: float, y: float, angle: float) -> None:
    env.x, env.y, env.angle = x, y, angle


def _open_direction(env: MazeEnv, x: float, y: float) -> float:
    """An angle the agent at a cell centre can walk along for half a cell."""
    for angle in np.linspace(0, 2 * np.pi, 8, endpoint=False):
        if env._clear(x + 0.5 * np.cos(angle), y + 0.5 * np.sin(angle)):
            return float(angle)
    raise AssertionError("boxed in")


def test_an_apple_gives_one_and_is_gone_until_the_portal():
    env = maze()
    env.reset(seed=1)
    ax, ay = env.layout.apples[0]
    angle = _open_direction(env, ax, ay)
    # stand half a cell away, facing the apple
    _place(env, ax + 0.5 * np.cos(angle), ay + 0.5 * np.sin(angle), angle + np.pi)
    _, reward, *_ = env.step(FORWARD)
    assert reward == 1.0 and not env.apple_on[0] and env.apples_eaten == 1
    _place(env, ax, ay, angle)  # back on the apple's spot: nothing left to take
    _, reward, *_ = env.step(TURN_LEFT)
    assert reward == 0.0


def test_the_portal_gives_ten_respawns_and_brings_the_apples_back():
    env = maze()
    env.reset(seed=2)
    env.apple_on[:] = False
    px, py = env.layout.portal
    angle = _open_direction(env, px, py)
    _place(env, px + 0.5 * np.cos(angle), py + 0.5 * np.sin(angle), angle + np.pi)
    _, reward, terminated, truncated, info = env.step(FORWARD)
    assert reward == 10.0 and info["portals_entered"] == 1
    assert not terminated and not truncated
    assert env.apple_on.all()
    spawn_cells = {tuple(s) for s in env.layout.spawns}
    assert (env.x, env.y) in spawn_cells


def test_an_episode_is_sixty_seconds_of_game_time():
    env = maze(episode_seconds=2.0)  # 2 s x 60 fps / 4 = 30 steps
    env.reset(seed=0)
    for step in range(1, 31):
        *_, terminated, truncated, _ = env.step(TURN_LEFT)
        assert not terminated
        assert truncated == (step == 30)


def test_a_wall_in_front_fills_the_view():
    env = maze()
    env.reset(seed=3)
    walls = env.layout.walls
    rows, cols = np.nonzero(walls[1:-1, 1:-1] == 0)
    for r, c in zip(rows + 1, cols + 1, strict=True):
        if walls[r, c + 1]:  # a wall east of this floor cell
            break
    _place(env, c + 0.75, r + 0.5, 0.0)  # a quarter cell from it, facing it
    frame = env._observe().transpose(1, 2, 0)
    assert not np.all(frame == CEILING, axis=-1).any()
    assert np.all(frame == frame[42, 42])  # one flat wall, one colour: no ceiling, no floor
    assert not np.all(np.abs(frame[42, 42].astype(int) - FLOOR) <= 3)


def test_looking_down_a_corridor_shows_ceiling_wall_and_floor():
    env = maze()
    env.reset(seed=0)
    x, y = env.layout.spawns[0]

    def free_distance(angle):
        d = 0.0
        while env._clear(x + (d + 0.1) * np.cos(angle), y + (d + 0.1) * np.sin(angle)):
            d += 0.1
        return d

    angle = max(np.linspace(0, 2 * np.pi, 16, endpoint=False), key=free_distance)
    assert free_distance(angle) >= 1.0
    _place(env, x, y, angle)
    frame = env._observe().transpose(1, 2, 0)
    middle = frame[:, 42]
    assert np.all(middle[0] == CEILING)
    assert np.all(np.abs(middle[-1].astype(int) - FLOOR) <= 3)  # the nearest floor row
    wall = middle[40:44]
    assert not np.all(wall == CEILING, axis=-1).any() and len({tuple(p) for p in wall}) == 1


def test_evaluation_mazes_are_fixed_and_training_never_draws_them():
    cfg = compose("env=maze/small")
    evaluation = make_env(cfg.env, evaluation=True)
    seeds = [evaluation.reset(seed=s)[1]["maze_seed"] for s in range(len(cfg.env.eval_seeds))]
    assert seeds == list(cfg.env.eval_seeds)
    training = make_env(cfg.env)
    training.reset(seed=0)

    class Rigged:  # the generator's next draws are evaluation seeds, then a fresh one
        def __init__(self):
            self.draws = [*cfg.env.eval_seeds, 12345]

        def integers(self, *args):
            return self.draws.pop(0)

    training._np_random = Rigged()
    assert training._next_maze_seed() == 12345


def test_render_shows_the_view_beside_a_map(tmp_path):
    cfg = compose("env=maze/small")
    env = make_env(cfg.env, render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(5):
        env.step(FORWARD)
    picture = env.render()
    assert picture.shape == (336, 672, 3) and picture.dtype == np.uint8
    assert len(env.path) == 6


def test_asyncrl_maze_writes_a_gif_and_a_map(tmp_path):
    from asyncrl.commands.maze import main

    out = tmp_path / "m.gif"
    assert main(["--level", "small", "--steps", "10", "--out", str(out)]) == 0
    assert out.stat().st_size > 0 and out.with_suffix(".png").stat().st_size > 0
