"""Serial mode: the same worker loop in-process, deterministic for a given seed."""

import csv

import torch

from asyncrl.run.launcher import Launcher
from tests.conftest import compose

SERIAL = ("env=classic/cartpole", "serial=true", "workers=1", "total_frames=600",
          "log.progress=false", "log.tensorboard=false", "eval.episodes=0")


def _train(run_dir, *extra):
    launcher = Launcher(compose(*SERIAL, *extra), run_dir)
    initial = [p.detach().clone() for p in launcher.shared.model.parameters()]
    assert launcher.run() == 0
    return launcher, initial


def test_serial_run_trains_the_shared_model_and_records_episodes(tmp_path):
    launcher, initial = _train(tmp_path)
    assert launcher.shared.total_frames() >= 600
    changed = [not torch.equal(a, b) for a, b in
               zip(initial, launcher.shared.model.parameters(), strict=True)]
    assert all(changed)  # every layer got gradient
    with (tmp_path / "episodes.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows and {"worker", "frames", "wall_time", "score"} <= set(rows[0])
    assert all(float(r["score"]) >= 1 for r in rows)  # CartPole pays 1 per step survived
    assert (tmp_path / "checkpoints" / "last.pt").is_file()


def test_serial_runs_with_one_seed_agree_and_other_seeds_differ(tmp_path):
    a, _ = _train(tmp_path / "a")
    b, _ = _train(tmp_path / "b")
    c, _ = _train(tmp_path / "c", "seed=2")
    pa, pb, pc = ([p.detach() for p in x.shared.model.parameters()] for x in (a, b, c))
    assert all(torch.equal(x, y) for x, y in zip(pa, pb, strict=True))
    assert not all(torch.equal(x, y) for x, y in zip(pa, pc, strict=True))


def test_every_layer_of_the_conv_network_gets_gradient_on_pong(tmp_path):
    launcher = Launcher(compose("env=atari/pong", "serial=true", "workers=1",
                                "total_frames=400", "log.progress=false",
                                "log.tensorboard=false", "eval.episodes=0"), tmp_path)
    before = {n: p.detach().clone() for n, p in launcher.shared.model.named_parameters()}
    assert launcher.run() == 0
    unchanged = [n for n, p in launcher.shared.model.named_parameters()
                 if torch.equal(before[n], p)]
    assert not unchanged


def _logged_lrs(run_dir) -> list[float]:
    with (run_dir / "updates.csv").open() as handle:
        return [float(row["lr"]) for row in csv.DictReader(handle)]


def test_lr_anneals_over_lr_anneal_frames_when_set(tmp_path):
    # by T=600 of 600 the lr has nearly reached 0; annealed over 6,000 frames it is still
    # at least 90 % of its start, as in the first tenth of a run ten times longer
    _train(tmp_path / "own", "lr=1e-3", "log.interval_seconds=0")
    _train(tmp_path / "long", "lr=1e-3", "lr_anneal_frames=6000", "log.interval_seconds=0")
    assert min(_logged_lrs(tmp_path / "own")) < 1e-4
    assert min(_logged_lrs(tmp_path / "long")) >= 0.9e-3


def test_a_full_disk_at_a_checkpoint_fails_the_run_in_one_line_and_keeps_the_last_one(
        tmp_path, monkeypatch, caplog):
    import errno
    import json

    import asyncrl.run_files.run_directory as run_directory
    from asyncrl.run_files.checkpoint import load_checkpoint, save_checkpoint

    saved: list[int] = []

    def fills_up_after_one(path, checkpoint):
        if saved:
            raise OSError(errno.ENOSPC, "No space left on device")
        save_checkpoint(path, checkpoint)
        saved.append(checkpoint.frames)

    monkeypatch.setattr(run_directory, "save_checkpoint", fills_up_after_one)
    launcher = Launcher(compose(*SERIAL, "total_frames=3000", "checkpoint.interval_frames=500"),
                        tmp_path)
    assert launcher.run() == 1
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["status"] == "failed"
    assert "No space left on device" in status["reason"]
    assert str(tmp_path / "checkpoints" / "last.pt") in status["reason"]
    assert load_checkpoint(tmp_path / "checkpoints" / "last.pt").frames == saved[0]
    assert status["frames"] < 3000  # it stopped at the failed write, not at the end
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors and all("\n" not in e for e in errors)


def test_a_resume_after_a_crash_logs_no_frames_twice(tmp_path):
    import json

    from asyncrl.run_files.checkpoint import load_checkpoint

    launcher, _ = _train(tmp_path)
    saved = load_checkpoint(tmp_path / "checkpoints" / "last.pt")
    t_saved = saved.frames
    before = list(csv.DictReader((tmp_path / "episodes.csv").open()))
    # what a crash leaves: rows logged after the last checkpoint, the last one half written
    with (tmp_path / "episodes.csv").open("a") as handle:
        handle.write(f"0,{t_saved + 50},9.0,12345.0,50,0\n0,{t_saved + 90},9.5,123")
    with (tmp_path / "updates.csv").open("a") as handle:
        handle.write(f"0,{t_saved + 60},9.2,1\n")
    resumed = Launcher(compose(*SERIAL, "total_frames=1200"), tmp_path, saved)
    assert resumed.run() == 0
    episodes = list(csv.DictReader((tmp_path / "episodes.csv").open()))
    assert episodes[:len(before)] == before
    assert all(float(r["score"]) != 12345.0 for r in episodes)
    assert all(int(r["frames"]) > t_saved for r in episodes[len(before):])
    updates = [int(r["frames"]) for r in csv.DictReader((tmp_path / "updates.csv").open())]
    assert t_saved + 60 not in updates
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["episodes"] == len(episodes)  # counted over the whole run, not the resume


def test_a_new_run_writes_a_checkpoint_at_T0_so_an_early_crash_can_resume(tmp_path,
                                                                        monkeypatch):
    import asyncrl.run_files.run_directory as run_directory
    from asyncrl.run_files.checkpoint import save_checkpoint

    written: list[int] = []

    def recording(path, checkpoint):
        written.append(checkpoint.frames)
        save_checkpoint(path, checkpoint)

    monkeypatch.setattr(run_directory, "save_checkpoint", recording)
    _train(tmp_path)
    assert written[0] == 0 and written[-1] >= 600


def test_status_json_follows_the_run_between_checkpoints(tmp_path, monkeypatch):
    """A sweep's progress and asyncrl-report --status read T and the score while it runs."""
    import asyncrl.run.launcher as launcher_module
    import asyncrl.run_files.run_directory as run_directory
    from asyncrl.run_files.run_status import read_status

    seen: list[dict] = []
    real = run_directory.write_status

    def write_and_read(run_dir, status, **fields):
        real(run_dir, status, **fields)
        seen.append(read_status(run_dir))  # what a reader finds on disk at that moment

    monkeypatch.setattr(run_directory, "write_status", write_and_read)
    monkeypatch.setattr(launcher_module, "STATUS_EVERY_S", 0.0, raising=False)
    # no checkpoint after T=0 until the end: status.json must not wait for one
    _train(tmp_path, "total_frames=3000", "log.interval_seconds=0",
           "checkpoint.interval_frames=100_000_000", "checkpoint.interval_seconds=1e9")
    running = [s for s in seen[:-1] if s["status"] == "running"]
    assert len(running) == len(seen) - 1 and seen[-1]["status"] == "finished"
    frames = [s["frames"] for s in running]
    assert frames[-1] > 0 and frames == sorted(frames)
    assert running[-1]["wall_time"] > 0 and running[-1]["total_frames"] == 3000
    assert any(s["recent_score"] is not None for s in running)
