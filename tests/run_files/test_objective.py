"""What a run hands a tuning sweeper: its score by ``objective``, None without one; and the
CLI's checks of a multirun written in Optuna's sweep syntax."""

from __future__ import annotations

import math

import pytest

from asyncrl.commands import cli
from asyncrl.errors import UserError
from asyncrl.run_files.objective import read_outcome, sweeper_value
from asyncrl.run_files.run_status import write_status
from tests.conftest import compose


@pytest.mark.parametrize(("status", "objective", "expected"), [
    ("finished", "train_score", 21.5),
    ("finished", "eval_score", 40.0),
    ("diverged", "train_score", None),
    ("failed", "eval_score", None),
    ("interrupted", "train_score", None),
])
def test_a_run_scores_by_its_objective_and_only_when_it_finished(tmp_path, status, objective,
                                                                 expected):
    write_status(tmp_path, status, recent_score=21.5, last_eval=40.0)
    outcome = read_outcome(tmp_path, objective)
    assert outcome.status == status
    assert sweeper_value(outcome) == expected
    assert (expected is None) == math.isnan(outcome.score)


def test_a_finished_run_without_an_evaluation_has_no_eval_score(tmp_path):
    write_status(tmp_path, "finished", recent_score=9.0, last_eval=None)
    assert sweeper_value(read_outcome(tmp_path, "eval_score")) is None
    assert sweeper_value(read_outcome(tmp_path, "train_score")) == 9.0


def test_a_directory_without_a_status_has_no_score(tmp_path):
    outcome = read_outcome(tmp_path, "train_score")
    assert outcome.status == "unknown" and sweeper_value(outcome) is None


@pytest.mark.parametrize(("overrides", "fragment"), [
    (["objective=best"], "objective=best: choose train_score or eval_score"),
    (["objective=eval_score", "eval.episodes=0"], "eval.episodes=0 turns them off"),
    (["objective=eval_score", "total_frames=1000", "eval.interval_frames=1000"],
     "lower eval.interval_frames"),
])
def test_an_objective_that_cannot_score_is_refused(overrides, fragment):
    from asyncrl.config.checks import validate

    with pytest.raises(UserError, match=fragment):
        validate(compose("env=classic/cartpole", *overrides))


OPTUNA = ["-m", "hydra/sweeper=optuna", "env=classic/cartpole"]


@pytest.mark.parametrize("swept", [
    ["lr=tag(log, interval(1e-4, 1e-2))"],
    ["lr=interval(1e-4, 1e-2)", "workers=choice(1, 2)"],
    ["algo=choice(a3c, nstep_q)", "seed=range(1, 4)"],
    ["total_frames=int(interval(2000, 4000))"],
])
def test_optuna_sweep_syntax_passes_the_multirun_checks_and_maximises(swept):
    args = cli.check_multirun_arguments([*OPTUNA, *swept])
    assert args[-1] == "hydra.sweeper.direction=maximize"
    assert args[:-1] == [*OPTUNA, *swept]


def test_a_direction_given_is_kept():
    args = cli.check_multirun_arguments([*OPTUNA, "hydra.sweeper.direction=minimize", "lr=1e-3"])
    assert "hydra.sweeper.direction=maximize" not in args


def test_an_impossible_choice_in_optuna_syntax_is_refused_before_any_run():
    with pytest.raises(UserError, match="workers=0"):
        cli.check_multirun_arguments([*OPTUNA, "workers=choice(1, 0)"])
