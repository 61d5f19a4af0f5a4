"""The processes of a run: worker slots and the evaluator, started, looked at, killed and
stopped. What to do about them is the supervisor's to decide (``supervisor.py``); the pool
only carries it out.

``ProcessPool`` runs each worker in a process of its own (the paper's arrangement).
``SerialPool`` runs one worker in the caller's process, the evaluator between its updates:
for debugging and for deterministic tests. Both hand their messages to ``queue`` and answer
the same calls (start, ``advance``, seen, alive, kill, stop), so the launcher drives both with
one loop: ``advance`` is one update in serial mode and nothing where processes step
themselves.
"""

from __future__ import annotations

import logging
import queue
import signal
import time
from collections.abc import Callable
from typing import Any

import torch.multiprocessing as mp

from asyncrl.learning import messages
from asyncrl.learning.evaluate import Evaluator, evaluator_process
from asyncrl.learning.shared import SharedState
from asyncrl.learning.worker import Worker, WorkerSpec, worker_process
from asyncrl.run import start_method
from asyncrl.run.supervisor import Seen

log = logging.getLogger(__name__)

JOIN_TIMEOUT_S = 15.0


class ProcessPool:
    """One process per worker slot, and the evaluator's."""

    wait_s = 0.2  # how long the launcher waits for a message: the processes run meanwhile

    def __init__(self, cfg: Any, shared: SharedState, generation: int = 0,
                 child_output: str | None = None) -> None:
        self.cfg, self.shared, self.generation = cfg, shared, generation
        self.child_output = child_output  # where children print, while a live panel is up
        start_method.prepare()
        self._ctx: Any = mp.get_context(start_method.START_METHOD)
        self.queue: Any = self._ctx.Queue()
        self.workers: dict[int, Any] = {}
        self.evaluator: Any = None

    def start_worker(self, slot: int, restarts: int = 0) -> None:
        """Start (or start again) the worker of ``slot``; ``restarts`` seeds it anew."""
        spec = WorkerSpec(slot, restarts, self.generation)
        process = self._ctx.Process(target=worker_process, name=f"asyncrl-worker-{slot}",
                                    args=(spec, self.cfg, self.shared, self.queue,
                                          self.child_output), daemon=True)
        process.start()
        self.workers[slot] = process

    def start_workers(self) -> None:
        for slot in range(self.cfg.workers):
            self.start_worker(slot)

    def advance(self) -> None:
        """Nothing to do here: each process steps its own loop."""

    def start_evaluator(self) -> None:
        self.evaluator = self._ctx.Process(target=evaluator_process, name="asyncrl-evaluator",
                                           args=(self.cfg, self.shared, self.queue,
                                                 self.child_output), daemon=True)
        self.evaluator.start()

    def seen(self) -> dict[int, Seen]:
        """Every worker slot as it looks now: alive, exit code, frames counted."""
        return {slot: Seen(p.is_alive(), p.exitcode, int(self.shared.frames[slot]))
                for slot, p in self.workers.items()}

    def alive(self) -> int:
        """How many worker processes are running."""
        return sum(p.is_alive() for p in self.workers.values())

    def evaluator_exit(self) -> int | None:
        """The evaluator's exit code once it died with one other than 0; else None."""
        process = self.evaluator
        if process is None or process.is_alive() or process.exitcode == 0:
            return None
        return int(process.exitcode)

    def forget_evaluator(self) -> None:
        self.evaluator = None

    def kill(self, slot: int) -> None:
        """SIGKILL the worker of ``slot`` and reap it (a hung one ignores anything gentler)."""
        self.workers[slot].kill()
        self.workers[slot].join(5.0)

    def stop(self, drain: Callable[[float], None], timeout: float = JOIN_TIMEOUT_S) -> None:
        """Ask every process to stop, then terminate, then kill what is still running.

        ``drain(seconds)`` reads the queue meanwhile: a process with queued messages cannot
        exit before they are read."""
        self.shared.request_stop()
        processes = [*self.workers.values(), *([self.evaluator] if self.evaluator else [])]
        deadline = time.monotonic() + timeout
        while any(p.is_alive() for p in processes) and time.monotonic() < deadline:
            drain(0.1)
        for process in processes:
            if process.is_alive():
                log.warning("%s did not stop in %.0f s; terminating it", process.name, timeout)
                process.terminate()
                process.join(2.0)
                if process.is_alive():
                    process.kill()
                    process.join(2.0)


class SerialPool:
    """Worker 0 in this process, stepped by ``advance``; the evaluator (if any) plays between
    its updates. It answers the launcher as ``ProcessPool`` does, so one loop drives both."""

    wait_s = 0.0  # nothing runs while the launcher waits: never wait for a message

    def __init__(self, cfg: Any, shared: SharedState, generation: int = 0) -> None:
        self.cfg, self.shared, self.generation = cfg, shared, generation
        self.queue: queue.SimpleQueue[messages.Message] = queue.SimpleQueue()
        self.worker: Worker | None = None
        self.exitcode: int | None = None  # None while the worker runs (or before it starts)
        self.evaluator: Evaluator | None = None

    def start_worker(self, slot: int, restarts: int = 0) -> None:
        self.worker = Worker(WorkerSpec(slot, restarts, self.generation), self.cfg,
                             self.shared, self.queue)
        self.exitcode = None

    def start_workers(self) -> None:
        self.start_worker(0)

    def start_evaluator(self) -> None:
        self.evaluator = Evaluator(self.cfg, self.shared)

    def advance(self) -> None:
        """One update of the worker, then an evaluation if one is due."""
        worker = self.worker
        if worker is None or self.exitcode is not None:
            return
        if not worker.step():
            self.exitcode = 0
            return
        frames = self.shared.total_frames()
        if self.evaluator is not None and self.evaluator.due(frames):
            message = self.evaluator.run(frames)
            if message is not None:
                self.queue.put(message)

    def seen(self) -> dict[int, Seen]:
        if self.worker is None:
            return {}
        slot = self.worker.spec.worker_id
        return {slot: Seen(self.exitcode is None, self.exitcode, int(self.shared.frames[slot]))}

    def alive(self) -> int:
        return int(self.worker is not None and self.exitcode is None)

    def evaluator_exit(self) -> int | None:
        return None  # it runs in this process: an error in it ends the run

    def forget_evaluator(self) -> None:
        self.evaluator = None

    def kill(self, slot: int) -> None:
        """Drop the worker as a killed process would be (its environments released)."""
        if self.worker is not None:
            self.worker.close()
        self.exitcode = -signal.SIGKILL

    def stop(self, drain: Callable[[float], None], timeout: float = JOIN_TIMEOUT_S) -> None:
        self.shared.request_stop()
        if self.worker is not None:
            self.worker.close()
        if self.evaluator is not None:
            self.evaluator.close()
            self.evaluator = None
        drain(0.0)


Pool = ProcessPool | SerialPool  # what the launcher drives
