"""``env=gym env.id=<id>``, and environment families as plug-ins."""

from __future__ import annotations

import csv
import re
import types

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from asyncrl.config.checks import validate
from asyncrl.config.schemas import SCHEMAS
from asyncrl.envs import family as family_module
from asyncrl.envs import frames_per_step, make_env
from asyncrl.envs.families.gym import FAMILY as GYM
from asyncrl.errors import UserError
from asyncrl.run.blindness import BLIND_READINGS
from tests import gym_test_envs
from tests.conftest import QUICK, REPO, actions_the_simulator_receives, compose, run_cli

TINY = "tests.gym_test_envs:TinyImage-v0"
# the checker is meant for the wrapped environment here, and says it would rather not be
pytestmark = pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")


def gym_env(env_id: str, *overrides: str, network: str = "ff", algo: str = "a3c"):
    cfg = compose("env=gym", f"env.id={env_id}", f"network={network}", f"algo={algo}",
                  *overrides)
    validate(cfg)
    return cfg


def test_vector_observations_become_float32_and_pass_the_env_checker():
    env = make_env(gym_env("Acrobot-v1").env)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32 and obs.shape == (6,)
    assert env.action_space == gym.spaces.Discrete(3)
    check_env(env, skip_render_check=True)


def test_a_discrete_state_becomes_one_hot():
    env = make_env(gym_env("FrozenLake-v1", algo="nstep_q").env)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (16,) and obs.dtype == np.float32
    assert obs.sum() == 1.0 and obs[0] == 1.0  # FrozenLake starts on square 0
    check_env(env, skip_render_check=True)


def test_box_actions_are_continuous_and_clipped_for_the_simulator_only():
    cfg = gym_env("Pendulum-v1", network="gaussian")
    assert GYM.continuous_actions(cfg.env)
    env = make_env(cfg.env)
    env.reset(seed=0)
    # a torque far past the bound of 2 is clipped, not refused; Pendulum clips it again
    # itself, so what is checked is the action its step receives
    received = actions_the_simulator_receives(env)
    sample = np.array([50.0], dtype=np.float32)
    _, reward, *_ = env.step(sample)
    assert np.isfinite(reward)
    assert [a.tolist() for a in received] == [[2.0]]
    assert sample.tolist() == [50.0]  # the policy's sample, as the rollout stores it
    assert GYM.episode_step_limit(cfg.env) == 200


def test_image_observations_are_grey_resized_and_stacked_channel_first():
    env = make_env(gym_env(TINY).env)
    assert env.observation_space.shape == (4, 84, 84) and env.observation_space.dtype == np.uint8
    first, _ = env.reset(seed=0)
    # the first state holds the first frame, stack times (as on Atari)
    assert all((first[i] == first[0]).all() for i in range(4))
    # grey of (200, 0, 0) is 0.299 * 200 = 59.8: the red channel counted, not averaged
    assert first[0, 0, 0] == 60
    after, *_ = env.step(0)
    assert (after[:3] == first[1:]).all() and not (after[3] == first[3]).all()
    assert after[3, 0, 0] == round(0.299 * 200 + 0.587 * 10 + 0.114 * 10)
    check_env(env, skip_render_check=True)


def test_colour_stacks_and_alpha_is_dropped():
    cfg = gym_env(TINY, "env.grayscale=false", "env.screen_size=40", "env.frame_stack=2",
                  "+env.kwargs.channels=4")
    env = make_env(cfg.env)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (6, 40, 40)  # 2 frames x RGB
    assert list(obs[:3, 0, 0]) == [200, 0, 0]


def test_actions_count_from_zero_and_frame_skip_repeats_them():
    cfg = gym_env(TINY, "env.frame_skip=3")
    env = make_env(cfg.env)
    env.reset(seed=0)
    assert env.action_space == gym.spaces.Discrete(3)
    _, reward, *_ = env.step(2)  # the third action is the space's 1: rewarded each repeat
    assert reward == 3.0
    assert env.unwrapped.actions == [1, 1, 1]
    assert frames_per_step(cfg.env) == 3
    for _ in range(6):
        *_, terminated, _, _ = env.step(0)
    # 20 steps end the episode: the seventh agent step stops after 2 of its 3
    assert terminated and env.unwrapped.steps == 20


def test_ale_through_gymnasium_takes_the_image_path():
    cfg = gym_env("ALE/Pong-v5", "+env.kwargs.repeat_action_probability=0.0")
    env = make_env(cfg.env)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 84, 84) and env.action_space == gym.spaces.Discrete(6)
    assert GYM.label(cfg.env) == "gym/ALE/Pong-v5"


@pytest.mark.parametrize(("overrides", "fragment"), [
    (["env.id=NoSuchThing-v0"], "unknown gymnasium environment id 'NoSuchThing-v0'"),
    (["env.id=CartPole-v7"], "unknown gymnasium environment id 'CartPole-v7'"),
    (["env.id=no_such_module:Foo-v0"], "cannot import 'no_such_module'"),
    (["env.id=Blackjack-v1"], "observation space Tuple("),
    (["env.id=tests.gym_test_envs:FloatImage-v0"], "observation space Box(0.0, 1.0, (48, 64, 3)"),
    (["env.id=tests.gym_test_envs:ManyButtons-v0"], "action space MultiDiscrete([2 2])"),
    (["env.id=CartPole-v1", "+env.kwargs.wheels=4"], "unexpected keyword argument 'wheels'"),
    ([f"env.id={TINY}", "env.screen_size=30"], "env.screen_size=30: must lie in [36, 512]"),
    ([f"env.id={TINY}", "env.frame_stack=0"], "env.frame_stack=0: must lie in [1, 64]"),
    (["env.id=CartPole-v1", "env.frame_skip=0"], "env.frame_skip=0: must be at least 1"),
    (["env.id=CartPole-v1", "env.max_episode_steps=0"], "env.max_episode_steps=0"),
    (["env.id=Pendulum-v1"], "Pendulum-v1 has continuous actions, but network=ff"),
    (["env.id=Acrobot-v1", "network=gaussian"], "Acrobot-v1 has discrete ones"),
])
def test_what_cannot_run_is_refused_in_one_line(overrides, fragment):
    with pytest.raises(UserError) as err:
        validate(compose("env=gym", *overrides))
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_cli_trains_on_an_image_environment_from_a_module_and_counts_repeats(workdir):
    out = workdir / "run"
    result = run_cli(["env=gym", f"env.id={TINY}", "env.frame_skip=2", "workers=2",
                      "envs_per_worker=2", "total_frames=1200", *QUICK, f"hydra.run.dir={out}"],
                     cwd=workdir, extra_env={"PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-2000:]
    episodes = list(csv.DictReader((out / "episodes.csv").read_text().splitlines()))
    # an episode is TinyImage's 20 steps: 10 agent steps of 2 frames each, counted as 20
    assert episodes and all(int(row["episode_frames"]) == 20 for row in episodes)
    assert "gym/tests.gym_test_envs:TinyImage-v0" in (out / "asyncrl.log").read_text()


@pytest.mark.parametrize("args", [
    ["env.id=Pendulum-v1", "network=gaussian"],
    ["env.id=FrozenLake-v1", "algo=nstep_q"],
])
def test_cli_trains_on_vector_and_one_hot_environments(workdir, args):
    result = run_cli(["env=gym", *args, "workers=1", "total_frames=800", *QUICK,
                      f"hydra.run.dir={workdir / 'run'}"], cwd=workdir)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (workdir / "run" / "checkpoints" / "last.pt").is_file()


def test_cli_refuses_an_unknown_id_before_making_a_run_directory(workdir):
    result = run_cli(["env=gym", "env.id=NoSuchThing-v0", f"hydra.run.dir={workdir / 'run'}"],
                     cwd=workdir)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "asyncrl: error: unknown gymnasium environment id 'NoSuchThing-v0': "
        "Environment `NoSuchThing` doesn't exist."]
    assert not (workdir / "run").exists()


# ---- families as plug-ins -------------------------------------------------------------

def test_every_env_option_names_a_registered_family_and_its_schema():
    families = family_module.families()
    assert set(SCHEMAS["env"]) == set(families)
    for path in (REPO / "conf" / "env").rglob("*.yaml"):
        declared = re.search(r"^family: (\w+)", path.read_text(), re.MULTILINE)
        if declared:
            assert declared.group(1) in families, path


def test_config_and_the_environment_factory_do_not_branch_on_the_family():
    modules = [*sorted((REPO / "asyncrl/config").glob("*.py")), REPO / "asyncrl/envs/__init__.py"]
    for module in modules:
        text = module.read_text()
        assert not re.search(r"\.family\s*(==|!=|in\b)", text), module


@pytest.fixture
def entry_point_family(monkeypatch):
    """A family named ``tiny`` that a package outside asyncrl registers as an entry point."""
    from dataclasses import dataclass

    from omegaconf import MISSING

    @dataclass
    class TinyConfig(family_module.DomainDefaults):
        family: str = "tiny"
        size: int = MISSING
        clip_rewards: bool = False

    plugin = types.ModuleType("tiny_family_plugin")
    plugin.FAMILY = family_module.Family(  # type: ignore[attr-defined]
        name="tiny", schema=TinyConfig,
        make=lambda env, render_mode, evaluation: gym_test_envs.TinyImage(),
        label=lambda env: f"tiny/{env.size}", describe=lambda env: "tiny",
        continuous_actions=lambda env: False, episode_step_limit=lambda env: 20)
    monkeypatch.setitem(__import__("sys").modules, "tiny_family_plugin", plugin)
    point = types.SimpleNamespace(value="tiny_family_plugin")
    monkeypatch.setattr(family_module, "entry_points", lambda group: [point])
    family_module.families.cache_clear()
    yield plugin
    family_module.families.cache_clear()


def test_a_family_registered_as_an_entry_point_is_made_and_named(entry_point_family):
    from omegaconf import OmegaConf

    node = OmegaConf.create({"family": "tiny", "size": 3})
    assert family_module.env_label(node) == "tiny/3"
    assert isinstance(make_env(node).unwrapped, gym_test_envs.TinyImage)


def test_two_families_of_one_name_are_refused(entry_point_family, monkeypatch):
    entry_point_family.FAMILY = GYM
    with pytest.raises(ValueError, match="two environment families are named 'gym'"):
        family_module.families()


def test_an_unknown_family_is_named_with_the_known_ones():
    from omegaconf import OmegaConf

    with pytest.raises(UserError, match="unknown environment family 'nope': one of atari, gym"):
        make_env(OmegaConf.create({"family": "nope"}))


@pytest.mark.parametrize(("algo", "last_at_least"), [
    # the last 20 read the cue for A3C; n-step Q's are played at each worker's final ε (0.1
    # for both at seed 1: 18.7 for a perfect reader; 0.5 at the draw's worst, 13.3)
    (["algo=a3c"], 18),
    (["algo=nstep_q", "algo.epsilon_anneal_frames=3000"], 12),
])
def test_the_algorithms_learn_to_read_images_through_the_gym_family(workdir, algo,
                                                                    last_at_least):
    """CueImage is a contextual bandit seen as images (γ = 0): which third of the frame is
    lit says which action pays. Random play earns 20 / 3 an episode; reading the image, 20.
    A3C's V is the same on every cue (γ = 0, and the reward follows the action), its policy
    is not; n-step Q's Q(s, a) differs between cues once it reads them (its ε annealed over
    the first 3,000 frames here). The watch for a blind network (asyncrl/run/blindness.py),
    which reads those spreads, must stay silent."""
    out = workdir / "run"
    result = run_cli(["env=gym", "env.id=tests.gym_test_envs:CueImage-v0", "env.frame_stack=1",
                      *algo, "algo.gamma=0", "workers=2", "total_frames=8000",
                      "log.progress=false", "log.interval_seconds=0.05", "eval.episodes=0",
                      f"hydra.run.dir={out}"], cwd=workdir, extra_env={"PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-2000:]
    rows = list(csv.DictReader((out / "episodes.csv").read_text().splitlines()))
    scores = [float(r["score"]) for r in sorted(rows, key=lambda r: int(r["frames"]))]
    first, last = sum(scores[:5]) / 5, sum(scores[-20:]) / 20
    assert first < 13 and last >= last_at_least, (first, last)  # the first 5: before it learns
    readings = (out / "updates.csv").read_text().splitlines()[1:]
    assert len(readings) > 2 * BLIND_READINGS  # enough for the watch to have spoken
    assert "stopped reading the screen" not in (out / "asyncrl.log").read_text()
