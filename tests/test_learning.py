"""Learning, not just running: A3C improves a policy on a cheap task through the real CLI."""

from __future__ import annotations

import csv

import pytest

from tests.conftest import QUICK, run_cli

# gamma 0.95 keeps CartPole's returns (1 per step) near the scale the shared torso handles
CARTPOLE = ["env=classic/cartpole", "workers=2", "lr=3e-3", "algo.gamma=0.95", *QUICK]


def scores(run_dir) -> list[float]:
    with (run_dir / "episodes.csv").open() as handle:
        rows = sorted(csv.DictReader(handle), key=lambda r: int(r["frames"]))
    return [float(r["score"]) for r in rows]


def test_a3c_learns_cartpole(workdir):
    run_dir = workdir / "run"
    result = run_cli([*CARTPOLE, "total_frames=60000", "log.tensorboard=false",
                      f"hydra.run.dir={run_dir}"], workdir, timeout=600)
    assert result.returncode == 0, result.stderr
    played = scores(run_dir)
    first, last = played[:20], played[-20:]
    # a random policy balances ~22 steps; the threshold is 4x that
    assert sum(first) / 20 < 40
    assert sum(last) / 20 >= 90, f"mean of the last 20 episodes: {sum(last) / 20:.1f}"


@pytest.mark.slow
def test_a3c_reaches_the_cartpole_limit_with_more_frames(workdir):
    run_dir = workdir / "run"
    result = run_cli([*CARTPOLE, "total_frames=200000", f"hydra.run.dir={run_dir}"], workdir,
                     timeout=1800)
    assert result.returncode == 0, result.stderr
    last = scores(run_dir)[-20:]
    assert sum(last) / 20 >= 300
