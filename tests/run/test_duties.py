"""The launcher's periodic duties, each on its own clock (run/launcher.py: Every, Duties)."""

from types import SimpleNamespace

from asyncrl.run.launcher import PROGRESS_LOG_EVERY_S, STATUS_EVERY_S, Duties, Every


def test_a_duty_is_due_after_its_seconds_or_its_frames_whichever_first():
    clock = Every(seconds=10.0, frames=1_000, last_time=100.0, last_frames=5_000)
    assert not clock.due(109.9, 5_999)
    assert clock.due(110.0, 5_000)  # ten seconds on, T unmoved
    assert clock.due(100.5, 6_000)  # a thousand frames on, half a second later
    clock.ran(100.5, 6_000)
    assert not clock.due(110.4, 6_999) and clock.due(110.5, 6_999)
    seconds_only = Every(seconds=2.0, last_time=0.0)
    assert not seconds_only.due(1.9, 10**12) and seconds_only.due(2.0)


def test_a_runs_duties_start_where_the_run_starts():
    cfg = SimpleNamespace(log=SimpleNamespace(interval_seconds=5.0),
                          checkpoint=SimpleNamespace(interval_seconds=600.0,
                                                     interval_frames=1_000_000))
    duties = Duties.of(cfg, frames=2_500_000)  # a resumed run at T = 2.5M
    now = duties.speed.last_time
    assert duties.progress_line.due(now)  # the first progress line comes at once
    assert not duties.status.due(now) and duties.status.due(now + STATUS_EVERY_S)
    assert duties.progress_line.seconds == PROGRESS_LOG_EVERY_S
    # the checkpoint counts its frames from the resumed T, not from 0
    assert not duties.checkpoint.due(now + 1, 3_499_999)
    assert duties.checkpoint.due(now + 1, 3_500_000)
    assert not duties.speed.due(now + 4.9) and duties.speed.due(now + 5.0)
