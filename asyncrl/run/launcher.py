"""Starts the workers around one shared model, watches them, and writes what the run leaves.

The launcher owns the run directory: workers only send messages (episodes, metric means,
errors) and the launcher turns them into files, TensorBoard points, checkpoints and the
console view. It never waits on a worker without a timeout, so a dead or stuck worker
cannot hang the run.
"""

from __future__ import annotations

import contextlib
import logging
import math
import queue
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from omegaconf import OmegaConf

from asyncrl import exit_codes
from asyncrl.algos import algorithm_class
from asyncrl.envs import EnvInfo, env_info
from asyncrl.envs.family import env_label
from asyncrl.errors import UserError
from asyncrl.learning import messages
from asyncrl.learning.child_output import CHILD_OUTPUT_FILE
from asyncrl.learning.seeding import seed_everything
from asyncrl.learning.shared import SharedState
from asyncrl.learning.worker import LOOP_METRICS
from asyncrl.nets import build_model
from asyncrl.optim import build_optimizer
from asyncrl.run.blindness import blindness_watch
from asyncrl.run.display import LiveDisplay, Progress
from asyncrl.run.pool import Pool, ProcessPool, SerialPool
from asyncrl.run.supervisor import GiveUp, Kill, Supervisor, describe_exit
from asyncrl.run_files import run_status, startup
from asyncrl.run_files.checkpoint import (
    Checkpoint,
    checkpoint_source,
    load_model_weights,
)
from asyncrl.run_files.recorder import Recorder
from asyncrl.run_files.run_directory import RunDirectory

log = logging.getLogger(__name__)

PROGRESS_LOG_EVERY_S = 30.0
# status.json is what a sweep's progress and asyncrl-report --status read while a run goes:
# rewritten this often (and with each progress line), not only when the run ends
STATUS_EVERY_S = 10.0


@dataclass(frozen=True)
class Ending:
    """How a run ended: its exit code, the status.json status, and why."""

    code: int
    status: str
    reason: str = ""


FINISHED = Ending(exit_codes.OK, run_status.FINISHED)


class RunDiverged(Exception):
    """A worker's loss stopped being finite: the run stops, no worker is restarted."""


class RunFailed(Exception):
    """A worker kept dying; the message says which and why."""


@dataclass
class Supervision:
    """The run's processes and the decisions about them."""

    decisions: Supervisor
    pool: Pool


def config_container(cfg: Any) -> dict[str, Any]:
    return OmegaConf.to_container(OmegaConf.structured(cfg), resolve=True,  # type: ignore[return-value]
                                  enum_to_str=True)


def build_shared_state(cfg: Any, info: EnvInfo | None = None) -> SharedState:
    """The shared model (and target network) for ``cfg``, with its optimizer's statistics,
    all in shared memory; ``info``: the environment's spaces where the caller read them."""
    info = info if info is not None else env_info(cfg.env)
    algorithm = algorithm_class(cfg.algo.name)
    model = build_model(cfg, info.observation_space, info.action_space, algorithm.head)
    optimizer = build_optimizer(cfg.optimizer, model.parameters(), cfg.workers)
    return SharedState.create(model, optimizer, cfg.workers,
                              with_target=algorithm.uses_target)


@dataclass
class Every:
    """A periodic duty's clock: due once ``seconds`` have passed since it last ran, or, with
    ``frames``, once T has moved that many frames past where it last ran."""

    seconds: float
    frames: int | None = None
    last_time: float = field(default_factory=time.monotonic)
    last_frames: int = 0

    def due(self, now: float, frames: int = 0) -> bool:
        return (now - self.last_time >= self.seconds
                or (self.frames is not None and frames - self.last_frames >= self.frames))

    def ran(self, now: float, frames: int = 0) -> None:
        self.last_time, self.last_frames = now, frames


@dataclass
class Duties:
    """The launcher's periodic duties, each on its own clock: the speed and the live panel
    (``log.interval_seconds``), the progress line in the log, status.json, and the
    checkpoint (``checkpoint.interval_frames`` or ``interval_seconds``)."""

    speed: Every
    progress_line: Every
    status: Every
    checkpoint: Every

    @classmethod
    def of(cls, cfg: Any, frames: int) -> Duties:
        now = time.monotonic()
        return cls(speed=Every(cfg.log.interval_seconds, last_time=now, last_frames=frames),
                   progress_line=Every(PROGRESS_LOG_EVERY_S, last_time=-math.inf),
                   status=Every(STATUS_EVERY_S, last_time=now),
                   checkpoint=Every(cfg.checkpoint.interval_seconds,
                                    cfg.checkpoint.interval_frames, now, frames))


class Launcher:
    """One training run: ``Launcher(cfg, run_dir, resume_from).run()`` returns an exit code."""

    def __init__(self, cfg: Any, run_dir: Path, resume_from: Checkpoint | None = None,
                 start_from: Checkpoint | None = None, env: EnvInfo | None = None):
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.files = RunDirectory(self.run_dir)
        self.generation = 0
        self.startup = startup.StartupClock()
        self.startup.mark(startup.IMPORTS)
        seed_everything(cfg.seed)
        self.shared = build_shared_state(cfg, env)
        self.startup.mark(startup.MODEL)
        if resume_from is not None:
            self._restore(resume_from)
        elif start_from is not None:
            self._start_from(start_from)
        self.recorder: Recorder | None = None
        # what one optimizer step reads: a minibatch's segments (the smallest, at least)
        segments = cfg.envs_per_worker // cfg.minibatches
        self.blindness = blindness_watch(
            self.shared.model, cfg.total_frames,
            algorithm_class(cfg.algo.name).blindness_spreads(cfg.algo, segments),
            probe_hint=cfg.algo.name == "a3c")  # what asyncrl-probe --analyse reads
        self.duties = Duties.of(cfg, self.shared.total_frames())
        self._speed = 0.0
        self._shutting_down = False

    def _restore(self, saved: Checkpoint) -> None:
        self._load_state(saved, self.files.checkpoint, "resume", with_optimizer=True,
                         target_epoch=saved.target_epoch)
        self.generation = saved.generation + 1
        if saved.torch_rng is not None:
            torch.set_rng_state(saved.torch_rng)

    def _start_from(self, saved: Checkpoint) -> None:
        """init_from=: a new run (generation 0, its own seed's streams and a directory of its
        own) that goes on from another run's state, under this run's config."""
        path, _ = checkpoint_source(Path(self.cfg.init_from))
        was = saved.config.get("optimizer", {}).get("name")
        same_optimizer = was == self.cfg.optimizer.name
        if not same_optimizer:
            log.warning("init_from: the checkpoint's optimizer was %s, this run's is %s: its "
                        "statistics start afresh", was, self.cfg.optimizer.name)
        # the epoch counts this run's interval: one saved under another would hold theta^-
        # still until T caught up with it
        epoch = (saved.frames // self.cfg.algo.target_update_frames
                 if self.shared.target is not None else 0)
        self._load_state(saved, path, "init_from", with_optimizer=same_optimizer,
                         target_epoch=epoch)
        log.info("starting from %s at T=%s", path, f"{saved.frames:,}")

    def _load_state(self, saved: Checkpoint, path: Path, why: str, with_optimizer: bool,
                    target_epoch: int) -> None:
        load_model_weights(self.shared.model, saved.model, path)
        if with_optimizer:
            try:
                notes = self.shared.optimizer.load_state_dict(saved.optimizer)
            except ValueError as error:
                raise UserError(f"checkpoint {path}: {error}") from None
            for note in notes:
                log.warning("%s: %s", why, note)
        if self.shared.target is not None:
            load_model_weights(self.shared.target, saved.target_or_model(), path)
            assert self.shared.target_epoch is not None
            self.shared.target_epoch[0] = target_epoch
        # T and the seconds so far go on, so the lr schedule, the curves and the minutes
        # to a score continue the run the checkpoint came from
        self.shared.base_frames = saved.frames
        self.shared.wall_offset = saved.wall_time

    # ---- the run ---------------------------------------------------------------------------

    def run(self) -> int:
        config = config_container(self.cfg)
        self.files.write_config(config)
        resume_frames = self.shared.base_frames if self.generation else None
        self.recorder = self.files.open_recorder(
            self.cfg.log.score_window,
            [*algorithm_class(self.cfg.algo.name).metrics, *LOOP_METRICS], resume_frames,
            self.cfg.log, config)
        title = f"asyncrl {self.cfg.algo.name} on {self._env_name()} ({self.cfg.workers} workers)"
        log.info("%s: T=%s of %s frames; outputs in %s (Ctrl-C stops it with a checkpoint; "
                 "resume=%s continues it)", title, f"{self.shared.total_frames():,}",
                 f"{self.cfg.total_frames:,}", self.run_dir, self.run_dir)
        ending = FINISHED
        self._write_status(run_status.RUNNING)
        self.display = LiveDisplay(title, self.cfg.log.progress)
        with self.display, _write_errors_said_once(), _signals_that_stop_the_run():
            # after the panel is up: children print to a file while it is
            supervision = Supervision(
                Supervisor(self.cfg.max_worker_restarts, self.cfg.stall_seconds),
                SerialPool(self.cfg, self.shared, self.generation) if self.cfg.serial
                else ProcessPool(self.cfg, self.shared, self.generation, self._child_output()))
            try:
                if self.generation == 0:
                    # at T=0, so that resume= works however early a crash comes (the first
                    # periodic checkpoint is minutes away)
                    self._save_checkpoint()
                self._drive(supervision, supervision.pool)
            except BaseException as error:
                ending = ending_of(error, self.run_dir)
                if not isinstance(error, ENDINGS_TOLD):
                    raise
            finally:
                with _sigint_ignored():  # let the shutdown finish its writes
                    unwritten = self._shutdown(supervision)
                    if unwritten is not None and ending.status != run_status.FAILED:
                        log.error("%s", unwritten)
                        ending = Ending(exit_codes.FAILED, run_status.FAILED, unwritten)
                    self._write_final_status(ending.status, ending.reason)
        return ending.code

    def _write_status(self, status: str, reason: str = "") -> None:
        recorder = self.recorder
        self.files.write_status(status, reason=reason, frames=self.shared.total_frames(),
                     total_frames=self.cfg.total_frames, wall_time=self.shared.wall_time(),
                     episodes=recorder.episode_count if recorder else 0,
                     recent_score=recorder.recent_mean() if recorder else None,
                     last_eval=recorder.last_eval if recorder else None)
        self.duties.status.ran(time.monotonic())

    def _write_final_status(self, status: str, reason: str) -> None:
        try:
            self._write_status(status, reason)
        except OSError as error:
            log.error("could not write %s/status.json: %s", self.run_dir,
                      error.strerror or error)

    def _env_name(self) -> str:
        return env_label(self.cfg.env)

    def _drive(self, sup: Supervision, pool: Pool) -> None:
        """The one loop of both modes: start the processes (or the in-process worker), then
        let the pool advance (serial: one update), read its messages, watch it, and do what
        is due, until T reaches the total or every worker has stopped."""
        self.startup.mark(startup.RUN_DIRECTORY)
        if self.cfg.eval.episodes > 0:
            pool.start_evaluator()
        for slot in range(self.cfg.workers):
            self._start_worker(sup, pool, slot)
        while True:
            pool.advance()
            self._drain(pool.queue, timeout=pool.wait_s, sup=sup)
            self._say_first_frame()
            if self.shared.total_frames() >= self.cfg.total_frames:
                return
            self._supervise(sup, pool)
            alive = pool.alive()
            if alive == 0:
                return  # every worker finished on its own
            self._periodic(alive)

    def _say_first_frame(self) -> None:
        """Once, when T first moves past where this run started: how long that took."""
        if self.startup.done or self.shared.total_frames() == self.shared.base_frames:
            return
        said = self.startup.finish()
        if said is not None:
            log.info("%s", said)

    def _child_output(self) -> str | None:
        """Where children write what is not a log record: a file while the panel is live."""
        return str(self.run_dir / CHILD_OUTPUT_FILE) if self.display.live else None

    def _start_worker(self, sup: Supervision, pool: Pool, slot: int) -> None:
        pool.start_worker(slot, sup.decisions.restarts.get(slot, 0))
        sup.decisions.started(slot, int(self.shared.frames[slot]), time.monotonic())

    def _supervise_evaluator(self, sup: Supervision, pool: Pool) -> None:
        """Restart an evaluator that died; past ``max_worker_restarts`` training goes on
        without evaluations, and the log says so."""
        exitcode = pool.evaluator_exit()
        if exitcode is None:
            return
        reason = describe_exit(exitcode)
        if not sup.decisions.evaluator_died():
            log.error("the evaluator died (%s) after %d restarts; training goes on without "
                      "evaluations", reason, sup.decisions.evaluator_restarts)
            pool.forget_evaluator()
            return
        log.warning("the evaluator died (%s); restarting it (%d/%d)", reason,
                    sup.decisions.evaluator_restarts, self.cfg.max_worker_restarts)
        pool.start_evaluator()

    def _supervise(self, sup: Supervision, pool: Pool) -> None:
        """Carry out what the supervisor decides from what the processes show now."""
        self._supervise_evaluator(sup, pool)
        for decision in sup.decisions.decide(pool.seen(), time.monotonic()):
            if isinstance(decision, GiveUp):
                raise RunFailed(decision.reason)
            if isinstance(decision, Kill):
                log.warning("worker %d made %s; killing it", decision.slot, decision.reason)
                pool.kill(decision.slot)
            else:
                log.warning("worker %d died (%s); restarting it (%d/%d)", decision.slot,
                            decision.reason, decision.count, self.cfg.max_worker_restarts)
                self._start_worker(sup, pool, decision.slot)

    # ---- messages and bookkeeping ------------------------------------------------------

    def _drain(self, source: Any, timeout: float, sup: Supervision | None = None) -> None:
        """Handle every message waiting; wait up to ``timeout`` for the first one."""
        try:
            message = source.get(timeout=timeout) if timeout > 0 else source.get_nowait()
        except queue.Empty:
            return
        while True:
            self._handle(message, sup)
            try:
                message = source.get_nowait()
            except queue.Empty:
                return

    def _handle(self, message: messages.Message, sup: Supervision | None = None) -> None:
        assert self.recorder is not None
        if isinstance(message, messages.Episode):
            self.recorder.episode(message.worker, message.frames, message.wall_time,
                                  message.score, message.episode_frames, message.environment)
        elif isinstance(message, messages.Updates):
            self.recorder.update(message.worker, message.frames, self.shared.wall_time(),
                                 message.stats)
            if self.blindness is not None:
                warning = self.blindness.reading(message.frames, message.stats)
                if warning is not None:
                    log.warning("%s", warning)
        elif isinstance(message, messages.Evaluation):
            scores = message.scores
            self.recorder.evaluation(message.frames, message.wall_time, scores)
            log.info("evaluation at T=%s: mean score %.2f over %d episodes",
                     f"{message.frames:,}", sum(scores) / len(scores), len(scores))
        elif isinstance(message, messages.Diverged):
            if not self._shutting_down:  # a second worker's report during shutdown: known
                raise RunDiverged(f"worker {message.worker}: {message.reason}")
        elif isinstance(message, messages.LogLine):
            log.log(message.level, "[%s] %s", message.source, message.text)
        elif isinstance(message, messages.WorkerError):
            log.error("worker %d raised %s\n%s", message.worker, message.reason, message.trace)
            if sup is not None:
                sup.decisions.reported(message.worker, message.reason)

    def _periodic(self, alive: int) -> None:
        """Each duty that is due: the speed and the panel, then the progress line and
        status.json with them, and the checkpoint on its own clock."""
        now, frames = time.monotonic(), self.shared.total_frames()
        speed = self.duties.speed
        if frames == speed.last_frames and self._speed == 0.0:
            # the workers are still starting: speed and ETA count from their first frame, so
            # neither the first line (0 frames/s) nor a resume's (startup in the mean) misleads
            speed.ran(now, frames)
        elif speed.due(now):
            self._speed = (frames - speed.last_frames) / (now - speed.last_time)
            speed.ran(now, frames)
            self._show_progress(now, frames, alive)
        if self.duties.checkpoint.due(now, self.shared.total_frames()):
            self._save_checkpoint()

    def _show_progress(self, now: float, frames: int, alive: int) -> None:
        assert self.recorder is not None
        self.recorder.speed(frames, self._speed)
        progress = self._progress(alive)
        self.display.show(progress)
        if self.duties.progress_line.due(now):
            self.duties.progress_line.ran(now)
            log.info("%s", progress.line())
            self._write_status(run_status.RUNNING)
        elif self.duties.status.due(now):
            self._write_status(run_status.RUNNING)

    def _progress(self, alive: int) -> Progress:
        assert self.recorder is not None
        return Progress(frames=self.shared.total_frames(), total=self.cfg.total_frames,
                        frames_per_second=self._speed, recent_score=self.recorder.recent_mean(),
                        episodes=self.recorder.episode_count, last_eval=self.recorder.last_eval,
                        workers_alive=alive, workers=self.cfg.workers)

    def _save_checkpoint(self) -> Path:
        frames = self.shared.total_frames()
        try:
            path = self.files.save_checkpoint(self._checkpoint(frames), self.cfg.checkpoint.keep)
        except OSError as error:
            raise RunFailed(f"could not write the checkpoint {self.files.checkpoint}: "
                            f"{error.strerror or error} (the last one written is kept)") from None
        self.duties.checkpoint.ran(time.monotonic(), frames)
        return path

    def _checkpoint(self, frames: int) -> Checkpoint:
        """The shared state at T = ``frames``, copied out of shared memory."""
        shared = self.shared
        target, target_epoch = None, 0
        if shared.target is not None and shared.target_epoch is not None:
            target = {k: v.detach().clone() for k, v in shared.target.state_dict().items()}
            target_epoch = int(shared.target_epoch[0])
        return Checkpoint(
            model={k: v.detach().clone() for k, v in shared.model.state_dict().items()},
            optimizer=shared.optimizer.state_dict(),
            frames=frames,
            wall_time=shared.wall_time(),
            generation=self.generation,
            config=config_container(self.cfg),
            target=target,
            target_epoch=target_epoch,
            torch_rng=torch.get_rng_state(),
        )

    # ---- shutdown ------------------------------------------------------------------------

    def _shutdown(self, sup: Supervision) -> str | None:
        """Stop every process (politely, then by force), save, plot, close files; say what
        could not be written, if anything."""
        self._shutting_down = True
        failure: str | None = None

        def drain(timeout: float) -> None:
            nonlocal failure
            failure = self._drain_in_shutdown(sup.pool.queue, failure, timeout)

        sup.pool.stop(drain)
        drain(0.0)
        if self.recorder is None:
            return failure
        try:
            path = self._save_checkpoint()
        except RunFailed as error:
            failure = str(error)
        self.display.show(self._progress(alive=0))
        try:
            self.recorder.close()
            self.files.plot_learning_curve(f"{self.cfg.algo.name} on {self._env_name()}",
                                           self.cfg.log.score_window)
        except OSError as error:
            failure = failure or unwritable(error, self.run_dir)
        if failure is None:
            log.info("T=%s frames; checkpoint %s; outputs in %s", f"{self.shared.total_frames():,}",
                     path, self.run_dir)
        return failure

    def _drain_in_shutdown(self, source: Any, failure: str | None,
                           timeout: float) -> str | None:
        """Read what the processes still send; a write that fails (a full disk) is kept as
        the reason, and the shutdown goes on: the processes still have to be stopped."""
        try:
            self._drain(source, timeout=timeout)
        except OSError as error:
            return failure or unwritable(error, self.run_dir)
        return failure


@contextlib.contextmanager
def _write_errors_said_once() -> Iterator[None]:
    """On a full disk every writer fails, and two of them would print a traceback of
    their own: TensorBoard's writer thread, and logging's handler for asyncrl.log. The run
    meets the same error at its next write and reports it in one line; the copies are left
    unsaid (a log line that cannot reach asyncrl.log still reaches the console)."""
    previous_hook, previous_raise = threading.excepthook, logging.raiseExceptions

    def hook(args: Any) -> None:
        if not (isinstance(args.exc_type, type) and issubclass(args.exc_type, OSError)):
            previous_hook(args)

    threading.excepthook, logging.raiseExceptions = hook, False
    try:
        yield
    finally:
        threading.excepthook, logging.raiseExceptions = previous_hook, previous_raise


class Terminated(KeyboardInterrupt):
    """SIGTERM: stopped as by Ctrl-C, but the exit code says which signal (143)."""


# what ``ending_of`` turns into an exit code and a line; anything else is a bug
ENDINGS_TOLD = (KeyboardInterrupt, RunDiverged, RunFailed, OSError)


def ending_of(error: BaseException, run_dir: Path) -> Ending:
    """How a run that raised ``error`` ends (exit code, status, reason), said in the log."""
    if isinstance(error, KeyboardInterrupt):
        log.warning("interrupted: stopping the workers and saving a checkpoint")
        if isinstance(error, Terminated):
            return Ending(exit_codes.TERMINATED, run_status.INTERRUPTED, "terminated (SIGTERM)")
        return Ending(exit_codes.INTERRUPTED, run_status.INTERRUPTED, "interrupted")
    if isinstance(error, RunDiverged):
        log.error("the run diverged: %s", error)
        return Ending(exit_codes.DIVERGED, run_status.DIVERGED, str(error))
    if isinstance(error, RunFailed):
        log.error("%s", error)
        return Ending(exit_codes.FAILED, run_status.FAILED, str(error))
    if isinstance(error, OSError):  # a full disk or a lost directory under a log file
        reason = unwritable(error, run_dir)
        log.error("%s", reason)
        return Ending(exit_codes.FAILED, run_status.FAILED, reason)
    # a bug: the status says what, and the traceback goes on up
    return Ending(exit_codes.FAILED, run_status.FAILED,
                  f"{type(error).__name__}: {error}".splitlines()[0])


def unwritable(error: OSError, run_dir: Path) -> str:
    """The line a failed write ends the run with."""
    return f"{error.strerror or error} while writing to {error.filename or run_dir}"


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated


@contextlib.contextmanager
def _signals_that_stop_the_run() -> Iterator[None]:
    """SIGINT and SIGTERM raise in the run's loop (a checkpoint, then exit 130 or 143)."""
    previous_term = signal.signal(signal.SIGTERM, _raise_terminated)
    # a shell starts a background job (`asyncrl ... &` in a script) with SIGINT ignored,
    # and Python keeps an ignored SIGINT: Ctrl-C or kill -INT would then do nothing
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous_term)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
