"""The launcher's decisions about its processes, from made-up observations: no process."""

from __future__ import annotations

import signal

import pytest

from asyncrl.run.supervisor import GiveUp, Kill, Restart, Seen, Supervisor, describe_exit

ALIVE = Seen(alive=True, exitcode=None, frames=0)


def _supervisor(max_restarts=2, stall=10.0, grace=30.0, slots=2):
    sup = Supervisor(max_restarts, stall, startup_grace=grace)
    for slot in range(slots):
        sup.started(slot, frames=0, now=0.0)
    return sup


def test_a_worker_that_moves_is_left_alone_and_one_that_finished_is_not_restarted():
    sup = _supervisor()
    assert sup.decide({0: Seen(True, None, 100), 1: Seen(False, 0, 50)}, now=5.0) == []
    assert sup.decide({0: Seen(True, None, 200), 1: Seen(False, 0, 50)}, now=500.0) == []


def test_a_dead_worker_is_restarted_with_its_reason_until_the_limit_then_the_run_gives_up():
    sup = _supervisor(max_restarts=2)
    killed = Seen(False, -signal.SIGKILL, 0)
    assert sup.decide({0: killed, 1: ALIVE}, 1.0) == [Restart(0, "killed by SIGKILL", 1)]
    sup.started(0, 0, 1.0)
    sup.reported(0, "ValueError: bad")  # what the worker said before it died
    assert sup.decide({0: Seen(False, 1, 0), 1: ALIVE}, 2.0) == [Restart(0, "ValueError: bad", 2)]
    sup.started(0, 0, 2.0)
    assert sup.decide({0: Seen(False, 1, 0), 1: ALIVE}, 3.0) == [
        GiveUp("worker 0 died (exit code 1) after 2 restarts; stopping the run")]
    assert sup.restarts == {0: 2, 1: 0}


def test_a_stalled_worker_is_killed_after_stall_seconds_but_a_starting_one_gets_the_grace():
    sup = _supervisor(stall=10.0, grace=30.0)
    # slot 0 never moved: still starting, so the grace applies; slot 1 moved, then stood
    assert sup.decide({0: ALIVE, 1: Seen(True, None, 40)}, 1.0) == []
    assert sup.decide({0: ALIVE, 1: Seen(True, None, 40)}, 10.0) == []
    assert sup.decide({0: ALIVE, 1: Seen(True, None, 40)}, 11.0) == [
        Kill(1, "no progress for 10 s")]
    assert sup.decide({0: ALIVE, 1: Seen(True, None, 40)}, 29.0) == [
        Kill(1, "no progress for 28 s")]
    decisions = sup.decide({0: ALIVE, 1: Seen(False, -signal.SIGKILL, 40)}, 30.0)
    # the killed slot restarts with the stall as its reason, not the signal
    assert decisions == [Kill(0, "no progress for 30 s"), Restart(1, "no progress for 28 s", 1)]


def test_an_evaluator_is_restarted_up_to_the_limit_then_dropped():
    sup = _supervisor(max_restarts=2)
    assert [sup.evaluator_died() for _ in range(3)] == [True, True, False]


def test_exit_codes_in_words():
    assert describe_exit(None) == "still running"
    assert describe_exit(-signal.SIGTERM) == "killed by SIGTERM"
    assert describe_exit(-99) == "killed by signal 99"
    assert describe_exit(3) == "exit code 3"


def _ending_table():
    from asyncrl import exit_codes
    from asyncrl.run.launcher import RunDiverged, RunFailed, Terminated
    from asyncrl.run_files import run_status

    full = OSError(28, "No space left on device")
    full.filename = "/runs/x/episodes.csv"
    return [
        (KeyboardInterrupt(), exit_codes.INTERRUPTED, run_status.INTERRUPTED, "interrupted"),
        (Terminated(), exit_codes.TERMINATED, run_status.INTERRUPTED, "terminated (SIGTERM)"),
        (RunDiverged("loss is nan at T=5"), exit_codes.DIVERGED, run_status.DIVERGED,
         "loss is nan at T=5"),
        (RunFailed("worker 1 gave up"), exit_codes.FAILED, run_status.FAILED,
         "worker 1 gave up"),
        (full, exit_codes.FAILED, run_status.FAILED,
         "No space left on device while writing to /runs/x/episodes.csv"),
        (OSError(5, "Input/output error"), exit_codes.FAILED, run_status.FAILED,
         "Input/output error while writing to /runs/x"),
        (ValueError("bad shape\nmore lines"), exit_codes.FAILED, run_status.FAILED,
         "ValueError: bad shape"),
    ]


@pytest.mark.parametrize(("error", "code", "status", "reason"), _ending_table())
def test_each_way_a_run_ends_has_its_exit_code_status_and_reason(error, code, status, reason):
    from pathlib import Path

    from asyncrl.run.launcher import ENDINGS_TOLD, ending_of

    ending = ending_of(error, Path("/runs/x"))
    assert (ending.code, ending.status, ending.reason) == (code, status, reason)
    # only a bug's traceback goes on up to the user
    assert isinstance(error, ENDINGS_TOLD) == (not isinstance(error, ValueError))
