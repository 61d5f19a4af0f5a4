"""The shared target network theta^- lags theta and refreshes on 40,000-frame boundaries of T."""

import torch

from asyncrl.run.launcher import build_shared_state
from tests.conftest import compose


def _params(model):
    return [p.detach().clone() for p in model.parameters()]


def _same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def _nudge(shared):
    with torch.no_grad():
        for p in shared.model.parameters():
            p.add_(0.5)


def test_value_based_runs_get_a_shared_target_and_a3c_none():
    q = build_shared_state(compose("algo=nstep_q", "env=classic/cartpole", "workers=2"))
    assert q.target is not None
    assert all(p.is_shared() and not p.requires_grad for p in q.target.parameters())
    assert _same(_params(q.target), _params(q.model))
    a3c = build_shared_state(compose("algo=a3c", "env=classic/cartpole", "workers=2"))
    assert a3c.target is None


def test_target_lags_until_T_crosses_the_boundary():
    cfg = compose("algo=one_step_q", "env=classic/cartpole", "workers=2")
    interval = cfg.algo.target_update_frames
    assert interval == 40_000
    shared = build_shared_state(cfg)
    old = _params(shared.model)
    _nudge(shared)
    shared.frames[0] += interval - 4
    assert not shared.refresh_target(interval)
    assert _same(_params(shared.target), old)  # still theta from before the update
    shared.frames[1] += 4  # T = 40,000 exactly
    assert shared.refresh_target(interval)
    assert _same(_params(shared.target), _params(shared.model))
    snapshot = _params(shared.model)
    _nudge(shared)
    shared.frames[0] += 39_000  # T = 79,000: same epoch, no refresh
    assert not shared.refresh_target(interval)
    assert _same(_params(shared.target), snapshot)
    shared.frames[0] += 1_020  # T = 80,020: crossed 80,000
    assert shared.refresh_target(interval)
    assert int(shared.target_epoch[0]) == 2
    assert _same(_params(shared.target), _params(shared.model))


def test_resumed_counter_does_not_refresh_before_the_next_boundary():
    cfg = compose("algo=nstep_q", "env=classic/cartpole", "workers=1")
    shared = build_shared_state(cfg)
    shared.base_frames = 120_500
    shared.target_epoch[0] = 3  # restored from the checkpoint
    assert not shared.refresh_target(40_000)
    shared.frames[0] += 40_000
    assert shared.refresh_target(40_000)


def test_checkpoint_keeps_the_target_network_and_resume_restores_it(tmp_path):
    from asyncrl.run.launcher import Launcher
    from asyncrl.run_files.checkpoint import checkpoint_path, load_checkpoint

    overrides = ("algo=nstep_q", "env=classic/cartpole", "serial=true", "workers=1",
                 "algo.target_update_frames=300", "log.progress=false",
                 "log.tensorboard=false", "eval.episodes=0")
    first = Launcher(compose(*overrides, "total_frames=1000"), tmp_path)
    assert first.run() == 0
    saved = load_checkpoint(checkpoint_path(tmp_path))
    assert saved.target is not None
    assert saved.target_epoch == saved.frames // 300 >= 3
    resumed = Launcher(compose(*overrides, "total_frames=2000"), tmp_path, resume_from=saved)
    assert int(resumed.shared.target_epoch[0]) == saved.target_epoch
    assert _same(_params(resumed.shared.target),
                 [saved.target[k] for k, _ in resumed.shared.target.named_parameters()])
    # theta^- lags theta: the run went on past the last refresh
    assert not _same(_params(resumed.shared.target), _params(resumed.shared.model))
