"""Hydra's Optuna sweeper tunes asyncrl through the real CLI (``asyncrl[tune]``), and
``asyncrl-report`` reads the study's directory."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from asyncrl.report import build_report, find_runs
from tests.conftest import run_cli

pytest.importorskip("hydra_plugins.hydra_optuna_sweeper",
                    reason="hydra-optuna-sweeper is not installed: pip install '.[tune]'")


def test_a_two_trial_optuna_study_on_cartpole_finds_the_best_lr(tmp_path):
    sweep = tmp_path / "study"
    result = run_cli(["-m", "hydra/sweeper=optuna", "hydra.sweeper.n_trials=2",
                      "hydra.sweeper.sampler.seed=1", "env=classic/cartpole", "workers=1",
                      "total_frames=3000", "lr=tag(log, interval(1e-4, 1e-2))",
                      "log.progress=false", "eval.episodes=0", f"hydra.sweep.dir={sweep}"],
                     tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stdout + result.stderr
    study = yaml.safe_load((sweep / "optimization_results.yaml").read_text())
    trials = {}
    for trial in ("0", "1"):
        status = json.loads((sweep / trial / "status.json").read_text())
        lr = yaml.safe_load((sweep / trial / "config.yaml").read_text())["lr"]
        assert status["status"] == "finished" and 1e-4 <= lr <= 1e-2
        trials[lr] = status["recent_score"]
    best_lr = max(trials, key=trials.__getitem__)  # the study maximises the score
    assert math.isclose(study["best_params"]["lr"], best_lr, rel_tol=1e-9)
    assert math.isclose(study["best_value"], trials[best_lr])

    report = build_report([sweep], tmp_path / "report").read_text()
    assert "| 2 | 2 | 0 |" in report  # both numbered trials read, both finished
    assert f"best objective {study['best_value']:.4g} with lr={best_lr:.4g}" in report
    assert [run.path.name for run in find_runs([sweep]).runs] == ["0", "1"]
