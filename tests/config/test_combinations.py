"""Every algo x network x optimizer trains from the real CLI with 2 worker processes (A3C's
combinations in the default session, the value-based methods' in the slow one), and the
value-based methods on Pong (the LSTM in the default session, feed-forward in the slow one).

The combinations of each algorithm run as one Hydra multirun, the way a user sweeps them,
which pays the CLI's start-up once per algorithm; each job still starts its own 2 worker
processes.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

from tests.conftest import ALGOS, QUICK, VALUE_BASED, run_cli

NETWORKS = ("ff", "lstm")
OPTIMIZERS = ("shared_rmsprop", "rmsprop", "momentum_sgd")
# A3C's six combinations run in the default session; the value-based methods' run in the
# slow one (3 sweeps of 6 runs, over 3 minutes on 2 cores), since each of them trains from
# the CLI in the default session too: on Pong below, and with several environments per
# worker in tests/learning/test_envs_per_worker.py
COMBINATIONS = [pytest.param(*combination, marks=() if combination[0] not in VALUE_BASED
                             else pytest.mark.slow)
                for combination in itertools.product(ALGOS, NETWORKS, OPTIMIZERS)]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


def _sweep(tmp_path_factory, name: str, args: list[str]) -> dict[tuple[str, ...], Path]:
    """Run ``asyncrl -m ARGS``; map each job's (algo, network, optimizer) to its directory."""
    workdir = tmp_path_factory.mktemp(name)
    sweep_dir = workdir / "sweep"
    result = run_cli(["-m", *args, "workers=2", "log.tensorboard=false", *QUICK,
                      f"hydra.sweep.dir={sweep_dir}"], workdir, timeout=550)
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = {}
    for config in sweep_dir.glob("*/config.yaml"):
        cfg = OmegaConf.load(config)
        jobs[(cfg["algo"]["name"], cfg["network"]["name"], cfg["optimizer"]["name"])] = (
            config.parent)
    return jobs


class LazySweeps:
    """Job directories by (algo, network, optimizer), each sweep run when the first of its
    jobs is asked for, so a session that deselects a sweep's tests never pays for it."""

    def __init__(self, tmp_path_factory) -> None:
        self.factory = tmp_path_factory
        self.jobs: dict[tuple[str, ...], Path] = {}

    def job(self, combination: tuple[str, str, str], name: str, args: list[str]) -> Path:
        if combination not in self.jobs:
            self.jobs.update(_sweep(self.factory, name, args))
        return self.jobs[combination]


@pytest.fixture(scope="module")
def cartpole_jobs(tmp_path_factory):
    """One sweep per algorithm."""
    sweeps = LazySweeps(tmp_path_factory)
    return lambda algo, network, optimizer: sweeps.job(
        (algo, network, optimizer), f"cartpole_{algo}", [
            "env=classic/cartpole", "total_frames=2000", f"algo={algo}",
            f"network={','.join(NETWORKS)}", f"optimizer={','.join(OPTIMIZERS)}"])


@pytest.mark.parametrize(("algo", "network", "optimizer"), COMBINATIONS)
def test_combination_trains_on_cartpole(cartpole_jobs, algo, network, optimizer):
    run_dir = cartpole_jobs(algo, network, optimizer)
    payload = torch.load(run_dir / "checkpoints" / "last.pt", weights_only=True)
    assert payload["frames"] >= 2000
    assert any("lstm" in key for key in payload["model"]) == (network == "lstm")
    stats = payload["optimizer"]["statistics"][0]
    first_param = next(iter(payload["model"].values()))
    if optimizer == "shared_rmsprop":
        assert stats.shape == first_param.shape
    else:  # one slot per worker, and each worker stepped its own
        assert stats.shape == (2, *first_param.shape)
        assert all(slot.abs().sum() > 0 for slot in stats)
    assert ("target" in payload) == (algo != "a3c")
    rows = _rows(run_dir / "updates.csv")
    assert {r["worker"] for r in rows} == {"0", "1"}
    assert all(float(r["loss"]) == float(r["loss"]) for r in rows)  # no NaN
    if algo != "a3c":
        assert all(0 < float(r["epsilon"]) <= 1 for r in rows)
    assert _rows(run_dir / "episodes.csv")


@pytest.fixture(scope="module")
def pong_jobs(tmp_path_factory):
    """One sweep per network."""
    sweeps = LazySweeps(tmp_path_factory)
    return lambda algo, network: sweeps.job(
        (algo, network, "shared_rmsprop"), f"pong_{network}", [
            "env=atari/pong", "env.max_episode_frames=1200", "total_frames=3000",
            f"algo={','.join(VALUE_BASED)}", f"network={network}"])


# the LSTM's sweep in the default session (the paper's conv torso and the Q head on Pong's
# screens, then the LSTM); the feed-forward one in the slow session, since the value-based
# methods' feed-forward network trains from the CLI in the default one on CartPole
# (tests/learning/test_envs_per_worker.py, tests/commands/test_option_runs.py)
@pytest.mark.parametrize(("algo", "network"), [
    pytest.param(algo, network, marks=pytest.mark.slow if network == "ff" else ())
    for algo, network in itertools.product(VALUE_BASED, NETWORKS)])
def test_value_based_methods_train_on_pong(pong_jobs, algo, network):
    run_dir = pong_jobs(algo, network)
    rows = _rows(run_dir / "episodes.csv")
    assert rows and all(-21 <= float(r["score"]) <= 21 for r in rows)
    assert torch.load(run_dir / "checkpoints" / "last.pt", weights_only=True)["frames"] >= 3000


@pytest.fixture(scope="module")
def mujoco_jobs(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("mujoco")
    sweep_dir = workdir / "sweep"
    result = run_cli(["-m", "env=mujoco/inverted_pendulum", "total_frames=3000", "workers=2",
                      "algo.episode_updates=true,false", "log.tensorboard=false", *QUICK,
                      f"hydra.sweep.dir={sweep_dir}"], workdir, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return {OmegaConf.load(c)["algo"]["episode_updates"]: c.parent
            for c in sweep_dir.glob("*/config.yaml")}


@pytest.mark.parametrize("episode_updates", [True, False])
def test_a3c_gaussian_trains_on_mujoco(mujoco_jobs, episode_updates):
    run_dir = mujoco_jobs[episode_updates]
    payload = torch.load(run_dir / "checkpoints" / "last.pt", weights_only=True)
    assert payload["frames"] >= 3000
    assert any(key.startswith("actor.core.lstm") for key in payload["model"])
    assert any(key.startswith("critic.core.lstm") for key in payload["model"])
    updates = _rows(run_dir / "updates.csv")
    assert {r["worker"] for r in updates} == {"0", "1"}
    assert all(float(r["loss"]) == float(r["loss"]) for r in updates)
    episodes = _rows(run_dir / "episodes.csv")
    assert episodes and all(float(r["score"]) >= 1 for r in episodes)
    # one update per episode, or one per t_max = 5 steps
    steps_per_update = sum(int(r["episode_frames"]) for r in episodes) / sum(
        float(r["updates"]) for r in updates)
    if episode_updates:
        assert steps_per_update > 5
    else:
        assert steps_per_update <= 5


def test_a3c_lstm_trains_on_a_maze(tmp_path):
    run_dir = tmp_path / "maze"
    result = run_cli(["env=maze/small", "total_frames=4000", "workers=2",
                      "log.tensorboard=false", *QUICK, f"hydra.run.dir={run_dir}"],
                     tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = torch.load(run_dir / "checkpoints" / "last.pt", weights_only=True)
    assert payload["frames"] >= 4000
    assert any("lstm" in key for key in payload["model"])
    assert payload["model"]["torso.conv.0.weight"].shape[1] == 3  # RGB in
    updates = _rows(run_dir / "updates.csv")
    assert {r["worker"] for r in updates} == {"0", "1"}
    assert all(float(r["loss"]) == float(r["loss"]) for r in updates)


def test_a3c_gaussian_trains_from_pixels(tmp_path):
    run_dir = tmp_path / "pixels"
    result = run_cli(["env=mujoco/pixels/pendulum", "algo.episode_updates=false",
                      "total_frames=600", "workers=2", "log.tensorboard=false", *QUICK,
                      f"hydra.run.dir={run_dir}"], tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = torch.load(run_dir / "checkpoints" / "last.pt", weights_only=True)
    assert payload["frames"] >= 600
    # two linear convs per branch, then the LSTM
    assert payload["model"]["actor.torso.conv.0.weight"].shape == (16, 3, 8, 8)
    assert "critic.core.lstm.weight_hh_l0" in payload["model"]
    updates = _rows(run_dir / "updates.csv")
    assert {r["worker"] for r in updates} == {"0", "1"}


@pytest.mark.parametrize(("algo", "optimizer"), list(itertools.product(ALGOS, OPTIMIZERS)))
def test_the_gaussian_combinations_are_refused_where_the_readme_says(algo, optimizer):
    """The other 12 of the 36: refused on Atari; on MuJoCo only A3C's 3 are accepted."""
    from asyncrl.config.checks import validate
    from asyncrl.errors import UserError
    from tests.conftest import compose

    choice = [f"algo={algo}", "network=gaussian", f"optimizer={optimizer}"]
    with pytest.raises(UserError, match="network=gaussian draws continuous actions|one Q-value"):
        validate(compose(*choice, "env=atari/pong"))
    mujoco = compose(*choice, "env=mujoco/hopper")
    if algo == "a3c":
        validate(mujoco)
    else:
        with pytest.raises(UserError, match="continuous actions|one Q-value"):
            validate(mujoco)
