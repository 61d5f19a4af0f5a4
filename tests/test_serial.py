"""Serial mode: the same worker loop in-process, deterministic for a given seed."""

import csv

import torch

from asyncrl.launcher import Launcher
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
