"""The LogUniform learning-rate sweep: the draws, the plan, failures, divergence, resuming."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from asyncrl.errors import UserError
from asyncrl.run.sweep import log_uniform, plan
from asyncrl.run_files.run_status import read_status, write_status
from asyncrl.sweep_range import check_range
from tests.conftest import QUICK, cli_env, run_cli


def test_draws_stay_in_bounds_and_are_uniform_in_log_space():
    draws = log_uniform(np.random.default_rng(7), 1e-4, 1e-2, 20_000)
    assert draws.min() >= 1e-4 and draws.max() <= 1e-2
    # each of 10 equal slices of log10 in [-4, -2] holds 1/10 of the draws
    counts, _ = np.histogram(np.log10(draws), bins=10, range=(-4, -2))
    assert np.all(np.abs(counts - 2000) < 150), counts
    # while a uniform draw would put 1 % of them below 1e-4 * 2
    assert 0.13 < np.mean(draws < 1e-3 / 5) < 0.17  # log-uniform: (log 2e-4 - log 1e-4)/log 100


def test_every_run_gets_its_own_seed_and_lr_and_discrete_sweeps_multiply():
    runs = plan(["env=atari/pong", "optimizer=shared_rmsprop,rmsprop"], "lr", 1e-4, 1e-2,
                trials=5, sampler_seed=0)
    assert len(runs) == 10
    assert len({r.seed for r in runs}) == 10 and len({r.value for r in runs}) == 10
    assert all(1e-4 <= r.value <= 1e-2 for r in runs)
    assert sum("optimizer=rmsprop" in r.overrides for r in runs) == 5
    assert all("env=atari/pong" in r.overrides for r in runs)
    assert all(f"lr={r.value}" in r.overrides and f"seed={r.seed}" in r.overrides for r in runs)
    assert len({r.subdir for r in runs}) == 10
    # the same sampler seed plans the same sweep: what resuming relies on
    again = plan(["env=atari/pong", "optimizer=shared_rmsprop,rmsprop"], "lr", 1e-4, 1e-2, 5, 0)
    assert [r.overrides for r in again] == [r.overrides for r in runs]


def test_the_swept_keys_cannot_also_be_fixed():
    with pytest.raises(UserError, match="lr is what the sweep sets"):
        plan(["lr=0.1"], "lr", 1e-4, 1e-2, 3, 0)


@pytest.mark.parametrize(("low", "high", "message"), [
    (1e-2, 1e-4, "low must be below high"), (1e-3, 1e-3, "low must be below high"),
    (0.0, 1e-2, "must be positive"), (-1e-4, 1e-2, "must be positive"),
    (1e-4, float("inf"), "and finite"), (float("nan"), 1e-2, "and finite")])
def test_impossible_ranges_are_refused(low, high, message):
    with pytest.raises(UserError, match=message):
        check_range(low, high, 10)


def test_an_impossible_range_is_one_line_before_any_run(tmp_path):
    result = run_cli(["-m", "+sweep=lr_loguniform", "hydra.sweeper.low=1e-2",
                      "hydra.sweeper.high=1e-4", f"hydra.sweep.dir={tmp_path / 'sweep'}"],
                     tmp_path, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "low must be below high" in lines[0]
    assert not (tmp_path / "sweep").exists()


class _Recorder:
    """A launcher that runs nothing: it keeps the overrides of each job it is handed."""

    def __init__(self) -> None:
        self.jobs: list[list[str]] = []

    def launch(self, batch, initial_job_idx):
        from hydra.core.utils import JobReturn, JobStatus

        self.jobs += [list(job) for job in batch]
        return [JobReturn(overrides=job, status=JobStatus.COMPLETED, _return_value=0)
                for job in batch]


def planned_sweep(tmp_path, arguments):
    """The runs the LogUniform sweeper hands its launcher for ``asyncrl -m ARGUMENTS``,
    composed and planned as Hydra does it, with nothing run."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import create_config_search_path
    from hydra.core.plugins import Plugins
    from hydra.core.utils import setup_globals
    from hydra.types import HydraContext, RunMode

    from asyncrl.config.paths import config_dir

    setup_globals()
    loader = ConfigLoaderImpl(config_search_path=create_config_search_path(str(config_dir())))
    overrides = [*arguments, f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    config = loader.load_configuration("config", overrides, run_mode=RunMode.MULTIRUN)
    context = HydraContext(config_loader=loader, callbacks=None)
    sweeper = Plugins.instance().instantiate_sweeper(hydra_context=context,
                                                     task_function=lambda cfg: 0,
                                                     config=config)
    sweeper.launcher = recorder = _Recorder()
    sweeper.sweep([a for a in arguments if not a.startswith("hydra.")])
    return json.loads((tmp_path / "sweep" / "sweep.json").read_text())["runs"], recorder


def test_the_mujoco_preset_draws_from_mujocos_range(tmp_path):
    """The primary config's env is Pong; the preset's env list must not inherit its range."""
    runs, recorder = planned_sweep(tmp_path, ["+experiment=mujoco_sweep",
                                              "hydra.sweeper.trials=4"])
    assert len(runs) == 36 and len(recorder.jobs) == 36
    lrs = [r["value"] for r in runs]
    assert all(1e-5 <= v <= 1e-1 for v in lrs)
    # 36 draws from (1e-4, 1e-2) would never leave it; from (1e-5, 1e-1) about half do
    assert sum(not 1e-4 <= v <= 1e-2 for v in lrs) >= 6
    assert all((r["low"], r["high"]) == (1e-5, 1e-1) for r in runs)


def test_a_sweep_over_two_families_draws_each_from_its_own_range(tmp_path):
    runs, _ = planned_sweep(tmp_path, ["+sweep=lr_loguniform", "hydra.sweeper.trials=3",
                                       "env=atari/pong,mujoco/hopper"])
    ranges = {r["subdir"].split("/")[0]: (r["low"], r["high"]) for r in runs}
    assert ranges == {"env-atari-pong": (1e-4, 1e-2), "env-mujoco-hopper": (1e-5, 1e-1)}
    # a bound given on the command line holds for every run; the other stays the env's
    runs, _ = planned_sweep(tmp_path / "low", ["+sweep=lr_loguniform", "hydra.sweeper.trials=3",
                                               "hydra.sweeper.low=1e-3",
                                               "env=atari/pong,mujoco/hopper"])
    assert {(r["low"], r["high"]) for r in runs} == {(1e-3, 1e-2), (1e-3, 1e-1)}


def test_a_bound_outside_a_runs_env_range_is_one_line_and_exit_2(tmp_path, capsys):
    """low=0.5 fits no env's high: refused before any run, as the CLI refuses."""
    with pytest.raises(SystemExit) as stop:
        planned_sweep(tmp_path, ["+experiment=mujoco_sweep", "hydra.sweeper.low=0.5"])
    assert stop.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["asyncrl: error: sweep range (0.5, 0.1): low must be below high"]
    assert not (tmp_path / "sweep").exists()


def test_a_sweep_planned_before_per_run_ranges_draws_the_same_values():
    """Resuming compares the planned runs with sweep.json: the draws must not move."""
    old = np.exp(np.random.default_rng(0).uniform(math.log(1e-4), math.log(1e-2), 6))
    runs = plan(["optimizer=rmsprop,shared_rmsprop"], "lr", 1e-4, 1e-2, 3, 0)
    assert [r.value for r in runs] == [float(f"{v:.6g}") for v in old]


def test_a_diverging_run_stops_with_its_reason(tmp_path):
    run_dir = tmp_path / "run"
    # values inside their ranges that still blow up: no gradient clipping to speak of
    result = run_cli(["env=classic/cartpole", "optimizer=momentum_sgd", "lr=1",
                      "algo.max_grad_norm=1e30", "workers=2", "total_frames=20000",
                      *QUICK, f"hydra.run.dir={run_dir}"], tmp_path, timeout=200)
    assert result.returncode == 3, result.stdout[-2000:] + result.stderr[-2000:]
    status = read_status(run_dir)
    assert status["status"] == "diverged" and "not finite" in status["reason"]
    assert (run_dir / "checkpoints" / "last.pt").exists()


SWEEP = ["-m", "+sweep=lr_loguniform", "env=classic/cartpole", "total_frames=1500", "workers=2",
         "log.tensorboard=false", *QUICK]


@pytest.fixture(scope="module")
def failing_sweep(tmp_path_factory):
    """2 trials x (t_max 5, t_max 0): the two t_max=0 runs fail their config check."""
    workdir = tmp_path_factory.mktemp("sweep")
    sweep_dir = workdir / "sweep"
    args = [*SWEEP, "hydra.sweeper.trials=2", "algo.t_max=5,0", f"hydra.sweep.dir={sweep_dir}"]
    result = run_cli(args, workdir, timeout=400)
    return workdir, sweep_dir, args, result


def test_a_failing_run_is_marked_and_the_sweep_goes_on(failing_sweep):
    _, sweep_dir, _, result = failing_sweep
    manifest = json.loads((sweep_dir / "sweep.json").read_text())
    states = {r["subdir"]: r["status"] for r in manifest["runs"]}
    assert len(states) == 4
    good = [s for d, s in states.items() if d.startswith("algo.t_max-5")]
    bad = [r for r in manifest["runs"] if r["subdir"].startswith("algo.t_max-0")]
    assert good == ["finished", "finished"], result.stderr[-3000:]
    assert [r["status"] for r in bad] == ["failed", "failed"]
    assert all("algo.t_max=0" in r["reason"] for r in bad)
    lrs = [r["value"] for r in manifest["runs"]]
    assert len(set(lrs)) == 4 and all(1e-4 <= v <= 1e-2 for v in lrs)
    assert not math.isnan(manifest["runs"][0]["recent_score"])


def test_resuming_keeps_finished_runs_and_continues_interrupted_ones(failing_sweep):
    workdir, sweep_dir, args, _ = failing_sweep
    runs = json.loads((sweep_dir / "sweep.json").read_text())["runs"]
    kept, again = sweep_dir / runs[0]["subdir"], sweep_dir / runs[1]["subdir"]
    kept_mtime = (kept / "checkpoints" / "last.pt").stat().st_mtime
    write_status(again, "interrupted", reason="test")
    result = run_cli(args, workdir, timeout=400)
    assert result.returncode != 2, result.stderr[-2000:]
    log = result.stdout + result.stderr
    assert "already finished; kept" in log and "already failed; kept" in log
    assert (kept / "checkpoints" / "last.pt").stat().st_mtime == kept_mtime
    assert read_status(again)["status"] == "finished"
    # the run continued from its checkpoint rather than starting over
    assert f"resuming {again} from T=" in (again / "asyncrl.log").read_text()


def test_a_different_sweep_in_the_same_directory_is_refused(failing_sweep):
    workdir, sweep_dir, args, _ = failing_sweep
    other = [a for a in args if not a.startswith("hydra.sweeper.trials")] + [
        "hydra.sweeper.trials=3"]
    result = run_cli(other, workdir, timeout=200)
    assert result.returncode != 0
    assert "holds a different sweep" in result.stderr


def test_a_cluster_launcher_runs_the_sweep_in_parallel_jobs(tmp_path):
    """submitit's local executor: the launcher that submits to Slurm, on this machine."""
    sweep_dir = tmp_path / "sweep"
    result = run_cli([*SWEEP, "hydra/launcher=submitit_local", "hydra.sweeper.max_batch_size=2",
                      "hydra.sweeper.trials=2", "workers=1", f"hydra.sweep.dir={sweep_dir}"],
                     tmp_path, timeout=400)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (sweep_dir / ".submitit").is_dir()  # the jobs went through submitit
    manifest = json.loads((sweep_dir / "sweep.json").read_text())
    assert [r["status"] for r in manifest["runs"]] == ["finished", "finished"]
    starts = [json.loads((sweep_dir / r["subdir"] / "status.json").read_text())["pid"]
              for r in manifest["runs"]]
    assert len(set(starts)) == 2  # each run in its own job process


def test_an_experiment_preset_names_what_it_sweeps(tmp_path):
    sweep_dir = tmp_path / "sweep"
    result = run_cli(["-m", "+experiment=worker_scaling", "env=classic/cartpole",
                      "hydra.sweeper.trials=1", 'hydra.sweeper.params.workers="1,2"',
                      "total_frames=1000", "log.tensorboard=false", *QUICK,
                      f"hydra.sweep.dir={sweep_dir}"], tmp_path, timeout=400)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((sweep_dir / "sweep.json").read_text())
    assert sorted(r["subdir"] for r in manifest["runs"]) == ["workers-1/run_000",
                                                             "workers-2/run_000"]


def test_an_interrupted_sweep_says_interrupted_for_the_run_it_stopped(tmp_path):
    sweep_dir = tmp_path / "sweep"
    args = [*SWEEP, "hydra.sweeper.trials=2", "total_frames=10_000_000",
            f"hydra.sweep.dir={sweep_dir}"]
    proc = subprocess.Popen([sys.executable, "-m", "asyncrl", *args], cwd=tmp_path,
                            env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not list(sweep_dir.glob("*/updates.csv")) and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(2)  # a few rows in: training, not starting
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    runs = json.loads((sweep_dir / "sweep.json").read_text())["runs"]
    assert [r["status"] for r in runs] == ["interrupted", "pending"]


def test_a_grid_plans_every_combination_with_seeds_one_to_trials_and_nothing_drawn():
    runs = plan(["env=atari/pong,atari/breakout", "total_frames=1000"], None, None, None,
                trials=2, sampler_seed=0)
    assert [r.subdir for r in runs] == ["env-atari-pong/seed_1", "env-atari-pong/seed_2",
                                        "env-atari-breakout/seed_1", "env-atari-breakout/seed_2"]
    assert runs[1].overrides == ["total_frames=1000", "env=atari/pong", "seed=2"]
    assert all(r.value is None and r.low is None for r in runs)


def test_the_57_games_preset_is_a_grid_over_every_game_with_a_final_evaluation(tmp_path):
    from hydra import compose, initialize_config_dir

    from asyncrl.commands.prepare import register_schemas
    from asyncrl.config.paths import config_dir

    register_schemas()
    with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["+experiment=atari57"],
                      return_hydra_config=True)
    games = cfg.hydra.sweeper.params.env.split(",")
    assert len(set(games)) == 57 and all(g.startswith("atari/") for g in games)
    assert cfg.hydra.sweeper.param is None and cfg.hydra.sweeper.trials == 1
    assert (cfg.total_frames, cfg.lr_anneal_frames, cfg.eval.final_episodes) == (
        5_000_000, 40_000_000, 10)
    assert cfg.envs_per_worker == 16  # the default setting, not a preset's own


def test_a_grid_sweep_runs_evaluates_and_resumes_through_the_cli(tmp_path):
    sweep = tmp_path / "grid"
    args = ["-m", "+experiment=atari57", "env=atari/pong,atari/breakout", "total_frames=4000",
            "workers=1", "envs_per_worker=2", "eval.final_episodes=1",
            "eval.max_episode_frames=400", "env.max_episode_frames=400", *QUICK,
            "hydra.sweeper.trials=1", f"hydra.sweep.dir={sweep}"]
    result = run_cli(args, tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    manifest = json.loads((sweep / "sweep.json").read_text())
    assert [r["status"] for r in manifest["runs"]] == ["finished", "finished"]
    assert manifest["param"] is None
    for game in ("pong", "breakout"):
        evaluation = json.loads((sweep / f"env-atari-{game}" / "seed_1" /
                                 "evaluation.json").read_text())
        assert len(evaluation["scores"]) == 1
    again = run_cli(args, tmp_path, timeout=300)  # the same command: nothing left to do
    assert again.returncode == 0
    assert "2 runs of seed ~ nothing drawn, 0 to do" in again.stdout + again.stderr
    # a run whose final evaluation was stopped (finished, no evaluation.json) is evaluated
    # when the sweep is carried on: resumed, with the sweep's own hydra.sweeper.* settings
    pong = sweep / "env-atari-pong" / "seed_1"
    (pong / "evaluation.json").unlink()
    third = run_cli(args, tmp_path, timeout=300)
    assert third.returncode == 0, third.stderr[-2000:]
    said = third.stdout + third.stderr
    assert "2 runs of seed ~ nothing drawn, 1 to do" in said and "without its final" in said
    assert (pong / "evaluation.json").is_file()
