"""The pools that start, look at, kill and stop a run's workers, without a launcher."""

from __future__ import annotations

import os
import queue
import signal
import time

from asyncrl.learning import messages
from asyncrl.run.launcher import build_shared_state
from asyncrl.run.pool import ProcessPool, SerialPool
from tests.conftest import compose

CARTPOLE = ["env=classic/cartpole", "log.tensorboard=false"]


def drained(pool_queue) -> list:
    got = []
    while True:
        try:
            got.append(pool_queue.get(timeout=0.05))
        except queue.Empty:
            return got


def wait_for(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_process_pool_starts_sees_kills_restarts_and_stops_its_workers():
    cfg = compose(*CARTPOLE, "workers=2", "total_frames=10_000_000", "eval.episodes=0")
    shared = build_shared_state(cfg)
    pool = ProcessPool(cfg, shared)
    pool.start_workers()
    try:
        wait_for(lambda: all(seen.frames > 0 for seen in pool.seen().values()))
        assert set(pool.seen()) == {0, 1} and pool.alive() == 2
        pool.kill(1)
        seen = pool.seen()
        assert not seen[1].alive and seen[1].exitcode == -signal.SIGKILL and seen[0].alive
        assert pool.alive() == 1
        before = int(shared.frames[1])
        pool.start_worker(1, restarts=1)
        wait_for(lambda: int(shared.frames[1]) > before)
        assert pool.alive() == 2
        # a CartPole episode lasts at most 500 steps: by 600 frames worker 0 ended one
        wait_for(lambda: int(shared.frames[0]) > 600)
    finally:
        got: list = []
        pool.stop(lambda timeout: got.extend(drained(pool.queue)), timeout=20.0)
    assert pool.alive() == 0
    assert all(seen.exitcode == 0 for seen in pool.seen().values())  # stopped, not killed
    assert any(isinstance(m, messages.Episode) for m in got)


def test_process_pool_reports_a_dead_evaluator_once_it_died_with_an_error():
    cfg = compose(*CARTPOLE, "workers=1", "eval.episodes=1")
    pool = ProcessPool(cfg, build_shared_state(cfg))
    assert pool.evaluator_exit() is None  # none started
    pool.start_evaluator()
    time.sleep(0.5)
    pool.evaluator.kill()
    pool.evaluator.join(5.0)
    assert pool.evaluator_exit() == -signal.SIGKILL
    pool.forget_evaluator()
    assert pool.evaluator_exit() is None
    pool.stop(lambda timeout: drained(pool.queue), timeout=5.0)


def test_serial_pool_trains_in_this_process_and_evaluates_between_updates():
    cfg = compose(*CARTPOLE, "workers=1", "serial=true", "total_frames=3000",
                  "eval.episodes=1", "eval.interval_frames=1000")
    shared = build_shared_state(cfg)
    pool = SerialPool(cfg, shared)
    pool.start_evaluator()
    pool.start_workers()
    assert pool.alive() == 1 and shared.total_frames() == 0  # built, not stepped
    after = []
    while pool.alive():
        pool.advance()  # one update
        after.append(shared.total_frames())
    assert pool.seen()[0].exitcode == 0  # finished on its own at T = total_frames
    got = drained(pool.queue)
    pool.stop(lambda timeout: None)
    assert shared.total_frames() >= 3000
    # each advance but the last (which found T at the total) moved T on
    assert all(b > a for a, b in zip(after[:-2], after[1:-1], strict=True))
    assert after[-1] == after[-2] >= 3000 and len(after) > 100
    evaluations = [m for m in got if isinstance(m, messages.Evaluation)]
    assert [m.frames // 1000 for m in evaluations] == [1, 2, 3]  # the last at T = 3000
    assert any(isinstance(m, messages.Episode) for m in got)


def test_serial_pool_answers_the_supervisor_as_a_process_pool_does():
    """A kill drops the in-process worker as a killed process (exit code -SIGKILL, its
    episodes' environments closed); the restart the supervisor then decides goes on from
    the shared T with a worker of its own seed."""
    cfg = compose(*CARTPOLE, "workers=1", "serial=true", "total_frames=1_000_000",
                  "eval.episodes=0")
    shared = build_shared_state(cfg)
    pool = SerialPool(cfg, shared)
    assert pool.seen() == {} and pool.alive() == 0  # nothing started
    pool.start_workers()
    for _ in range(5):
        pool.advance()
    before = shared.total_frames()
    assert before > 0 and pool.seen()[0].alive
    first = pool.worker
    pool.kill(0)
    assert first is not None and first.closed
    seen = pool.seen()[0]
    assert (seen.alive, seen.exitcode, seen.frames) == (False, -signal.SIGKILL, before)
    pool.advance()  # a dead worker plays nothing
    assert shared.total_frames() == before and pool.alive() == 0
    pool.start_worker(0, restarts=1)
    assert pool.worker is not None and pool.worker.spec.restart == 1
    pool.advance()
    assert shared.total_frames() > before and pool.seen()[0].alive
    pool.stop(lambda timeout: None)
    assert pool.worker.closed and shared.stopping()


def test_workers_are_forked_from_the_forkserver_that_imported_their_modules():
    from multiprocessing import forkserver

    from asyncrl.run import start_method
    from tests.run_health import children, parent_of

    cfg = compose(*CARTPOLE, "workers=1", "total_frames=10_000_000", "eval.episodes=0")
    shared = build_shared_state(cfg)
    pool = ProcessPool(cfg, shared)
    pool.start_workers()
    try:
        wait_for(lambda: shared.total_frames() > 0)
        server = forkserver._forkserver._forkserver_pid
        worker = pool.workers[0].pid
        assert start_method.START_METHOD == "forkserver" and server in children(os.getpid())
        assert parent_of(worker) == server  # forked by the server, not by this process
        with open(f"/proc/{server}/maps") as maps:  # torch was imported there, once
            assert "libtorch_cpu" in maps.read()
    finally:
        pool.stop(lambda timeout: drained(pool.queue), timeout=20.0)


def test_only_a_command_that_trains_in_processes_starts_the_forkserver_early():
    from asyncrl.commands.cli import trains_in_processes

    assert trains_in_processes(["env=atari/pong", "workers=2"])
    assert trains_in_processes(["-m", "lr=1e-3,2e-3"])
    assert not trains_in_processes(["--cfg", "job", "--resolve"])
    assert not trains_in_processes(["serial=true", "workers=1"])
