"""Every algo x network x optimizer trains from the real CLI with 2 worker processes.

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

from tests.conftest import QUICK, run_cli

ALGOS = ("a3c", "one_step_q", "one_step_sarsa", "nstep_q")
NETWORKS = ("ff", "lstm")
OPTIMIZERS = ("shared_rmsprop", "rmsprop", "momentum_sgd")
COMBINATIONS = list(itertools.product(ALGOS, NETWORKS, OPTIMIZERS))


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


@pytest.fixture(scope="module")
def cartpole_jobs(tmp_path_factory):
    """One sweep per algorithm, run when its first combination is tested."""
    swept: dict[tuple[str, ...], Path] = {}

    def job(algo: str, network: str, optimizer: str) -> Path:
        if (algo, network, optimizer) not in swept:
            swept.update(_sweep(tmp_path_factory, f"cartpole_{algo}", [
                "env=classic/cartpole", "total_frames=2000", f"algo={algo}",
                f"network={','.join(NETWORKS)}", f"optimizer={','.join(OPTIMIZERS)}"]))
        return swept[(algo, network, optimizer)]

    return job


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
    return _sweep(tmp_path_factory, "pong", [
        "env=atari/pong", "env.max_episode_frames=1200", "total_frames=3000",
        f"algo={','.join(ALGOS[1:])}", "network=ff,lstm"])


@pytest.mark.parametrize(("algo", "network"), list(itertools.product(ALGOS[1:], NETWORKS)))
def test_value_based_methods_train_on_pong(pong_jobs, algo, network):
    run_dir = pong_jobs[(algo, network, "shared_rmsprop")]
    rows = _rows(run_dir / "episodes.csv")
    assert rows and all(-21 <= float(r["score"]) <= 21 for r in rows)
    assert torch.load(run_dir / "checkpoints" / "last.pt", weights_only=True)["frames"] >= 3000
