"""init_from=: a new run that goes on from another run's checkpoint under its own config."""

import csv
import json

import pytest
import torch

from asyncrl.commands.start_from import start_checkpoint
from asyncrl.run.launcher import Launcher
from asyncrl.run_files.checkpoint import checkpoint_path, load_checkpoint
from tests.conftest import compose, run_cli

SERIAL = ("env=classic/cartpole", "serial=true", "workers=1", "log.progress=false",
          "log.tensorboard=false", "eval.episodes=0")


@pytest.fixture(scope="module")
def parent(tmp_path_factory):
    """A short serial CartPole run: the checkpoint the others start from."""
    run_dir = tmp_path_factory.mktemp("parent")
    assert Launcher(compose(*SERIAL, "total_frames=600"), run_dir).run() == 0
    return run_dir


def _started(run_dir, *overrides):
    cfg = compose(*SERIAL, *overrides)
    return Launcher(cfg, run_dir, start_from=start_checkpoint(cfg))


def _rows(path):
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_a_run_started_from_a_checkpoint_has_its_weights_statistics_and_T(parent, tmp_path):
    saved = load_checkpoint(checkpoint_path(parent))
    launcher = _started(tmp_path, f"init_from={parent}", "total_frames=1200", "lr=3e-3")
    model = launcher.shared.model.state_dict()
    assert all(torch.equal(model[k], v) for k, v in saved.model.items())
    statistics = launcher.shared.optimizer.state_dict()["statistics"]
    assert any(s.abs().sum() > 0 for s in statistics)  # the parent's, not a fresh start
    assert all(torch.equal(a, b) for a, b in
               zip(statistics, saved.optimizer["statistics"], strict=True))
    assert launcher.shared.total_frames() == saved.frames >= 600

    assert launcher.run() == 0
    updates = _rows(tmp_path / "updates.csv")
    assert updates and min(int(r["frames"]) for r in updates) > saved.frames
    # the lr schedule goes on from the parent's T, at this run's lr: 3e-3 (1 - T/1200),
    # where a schedule begun afresh would start near 3e-3
    lrs = [float(r["lr"]) for r in updates]
    assert 0 < max(lrs) <= 3e-3 * (1 - saved.frames / 1200) * 1.001
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["frames"] >= 1200
    assert load_checkpoint(checkpoint_path(tmp_path)).config["init_from"] == str(parent)


def test_another_optimizer_starts_its_statistics_afresh_from_the_checkpoints_weights(
        parent, tmp_path):
    saved = load_checkpoint(checkpoint_path(parent))
    launcher = _started(tmp_path, f"init_from={parent}", "total_frames=1200",
                        "optimizer=momentum_sgd")
    model = launcher.shared.model.state_dict()
    assert all(torch.equal(model[k], v) for k, v in saved.model.items())
    assert all(s.abs().sum() == 0 for s in launcher.shared.optimizer.state_dict()["statistics"])


def test_a_checkpoint_file_can_be_named_instead_of_a_run_directory(parent, tmp_path):
    copy = tmp_path / "copy.pt"
    copy.write_bytes(checkpoint_path(parent).read_bytes())
    launcher = _started(tmp_path / "run", f"init_from={copy}", "total_frames=1200")
    assert launcher.shared.total_frames() == load_checkpoint(copy).frames


def test_a_value_based_start_keeps_the_target_and_counts_its_own_target_interval(tmp_path):
    parent = tmp_path / "parent"
    base = ("algo=nstep_q", "algo.target_update_frames=200")
    assert Launcher(compose(*SERIAL, *base, "total_frames=600"), parent).run() == 0
    saved = load_checkpoint(checkpoint_path(parent))
    launcher = _started(tmp_path / "run", "algo=nstep_q", "algo.target_update_frames=1000",
                        f"init_from={parent}", "total_frames=5000")
    target = launcher.shared.target.state_dict()
    assert all(torch.equal(target[k], v) for k, v in saved.target.items())
    # saved under 200 frames the epoch was T // 200; under 1000 theta^- next refreshes at
    # the next multiple of 1000, not when T reaches 1000 * (T // 200)
    assert int(launcher.shared.target_epoch[0]) == saved.frames // 1000


def test_two_starts_in_one_process_each_check_that_the_weights_fit(parent, tmp_path):
    import asyncrl
    from asyncrl.errors import UserError

    start_checkpoint(compose(*SERIAL, f"init_from={parent}", "total_frames=1200"))
    with pytest.raises(UserError, match="does not fit the network"):
        asyncrl.train(["env=classic/cartpole", "network=lstm", f"init_from={parent}",
                       "total_frames=1200"], run_dir=tmp_path / "lstm")
    assert not (tmp_path / "lstm").exists()


def test_a_checkpoint_at_or_past_total_frames_is_refused(parent):
    from asyncrl.errors import UserError

    frames = load_checkpoint(checkpoint_path(parent)).frames
    with pytest.raises(UserError, match="leaves nothing to train"):
        start_checkpoint(compose(*SERIAL, f"init_from={parent}", f"total_frames={frames}"))


def test_a_relative_path_is_recorded_as_the_absolute_file(parent, workdir):
    import os

    relative = os.path.relpath(checkpoint_path(parent), workdir)
    run_dir = workdir / "branch"
    result = run_cli(["env=classic/cartpole", "workers=1", "log.progress=false",
                      "eval.episodes=0", f"init_from={relative}", "total_frames=1500",
                      f"hydra.run.dir={run_dir}"], workdir, timeout=120)
    assert result.returncode == 0, result.stderr
    recorded = (run_dir / "config.yaml").read_text()
    assert f"init_from: {checkpoint_path(parent).resolve()}" in recorded


def test_a_sweep_whose_checkpoint_is_damaged_is_refused_before_any_run(workdir):
    damaged = workdir / "damaged.pt"
    damaged.write_text("not a checkpoint")
    result = run_cli(["-m", "env=classic/cartpole", f"init_from={damaged}",
                      "lr=1e-3,2e-3", "total_frames=1000"], workdir, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "corrupt checkpoint" in lines[0], result.stderr
    assert not (workdir / "multirun").exists()


@pytest.mark.parametrize("extra, fragment", [
    (["init_from=does/not/exist"], "does/not/exist': no checkpoint file"),
    (["init_from=PARENT", "network=lstm"], "does not fit the network"),
    (["init_from=PARENT", "env=atari/pong"], "does not fit the network"),
    (["init_from=PARENT", "resume=PARENT"], "only total_frames"),
])
def test_a_checkpoint_that_is_missing_or_does_not_fit_is_refused_in_one_line(
        parent, workdir, extra, fragment):
    args = [a.replace("PARENT", str(parent)) for a in extra]
    result = run_cli(["env=classic/cartpole", "total_frames=1000", *args], workdir,
                     timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("asyncrl: error:"), result.stderr
    assert fragment in lines[0] and "Traceback" not in result.stdout + result.stderr
    assert not (workdir / "outputs").exists()


def test_a_started_run_resumes_from_its_own_checkpoint(parent, tmp_path, workdir):
    branch = tmp_path / "branch"
    assert _started(branch, f"init_from={parent}", "total_frames=1200").run() == 0
    t_branch = load_checkpoint(checkpoint_path(branch)).frames
    moved = tmp_path / "gone"
    parent.rename(moved)  # the origin is no longer needed once the branch has its own
    try:
        result = run_cli([f"resume={branch}", "total_frames=1800"], workdir, timeout=120)
    finally:
        moved.rename(parent)
    assert result.returncode == 0, result.stderr
    assert load_checkpoint(checkpoint_path(branch)).frames >= max(1800, t_branch)


def test_the_cli_composes_a_run_once_and_reads_its_start_once(parent, tmp_path, monkeypatch):
    """One pass: the command line is composed once and init_from's checkpoint read once;
    the launcher gets that checkpoint, that config, checked, and the environment's spaces,
    with nothing composed or read again."""
    from asyncrl.commands import cli, prepare
    from asyncrl.config import compose as compose_module
    from asyncrl.run_files import checkpoint as checkpoint_module

    calls = {"compose": 0, "read": 0}
    real_compose, real_read = compose_module.compose_config, checkpoint_module.load_checkpoint

    def counted_compose(*args, **kwargs):
        calls["compose"] += 1
        return real_compose(*args, **kwargs)

    def counted_read(path):
        calls["read"] += 1
        return real_read(path)

    monkeypatch.setattr(prepare, "compose_config", counted_compose)
    monkeypatch.setattr(checkpoint_module, "load_checkpoint", counted_read)
    launched = []
    monkeypatch.setattr(cli, "launch", launched.append)
    run_dir = tmp_path / "child"
    cli.run_command([*SERIAL, f"init_from={parent}", "total_frames=1200", "lr=3e-3",
                     f"hydra.run.dir={run_dir}"])
    assert calls == {"compose": 1, "read": 1}
    (prepared,) = launched
    assert prepared.run_dir == run_dir and prepared.config.lr == 3e-3
    assert prepared.start_from.frames == load_checkpoint(checkpoint_path(parent)).frames
    assert prepared.composed.hydra.job.name == "asyncrl"  # Hydra's logging settings with it
    assert prepared.env is not None  # the spaces init_from's fit read, passed on
    monkeypatch.undo()
    from asyncrl.commands import start_from
    from asyncrl.envs import env_info
    from asyncrl.run import launcher

    spaces_read = []
    for module in (prepare, start_from, launcher):
        monkeypatch.setattr(module, "env_info", lambda env: spaces_read.append(env) or
                            env_info(env))
    assert prepare.run_prepared(prepared) == 0  # the launcher composes nothing again
    assert spaces_read == []  # nor makes an environment to read the spaces again
    assert load_checkpoint(checkpoint_path(run_dir)).config["init_from"] == str(parent)
