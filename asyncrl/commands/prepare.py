"""One pass from a command line to a run ready to start: compose, check, resolve its start.

``prepare_run`` is the one way in. The CLI (a single run, and each run of a multirun whose
config the sweeper composed), ``asyncrl.train``, the probe and ``asyncrl --cfg job`` go
through it: the config is composed once (or taken as the sweeper composed it), checked
once, the checkpoint it goes on from (``resume=``) or starts from (``init_from=``) is read
once, and the run directory is chosen, all before anything is written. ``run_prepared``
hands the result to the launcher.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from asyncrl import exit_codes
from asyncrl.commands.start_from import requested_start
from asyncrl.config.checks import validate
from asyncrl.config.compose import (
    check_switches,
    compose_config,
    describe_config_error,
    to_typed,
)
from asyncrl.config.machine import usable_cpus
from asyncrl.config.saved import typed_config
from asyncrl.config.schemas import SCHEMAS, TrainConfig
from asyncrl.envs import EnvInfo, env_info
from asyncrl.errors import UserError
from asyncrl.run_files.checkpoint import Checkpoint, checkpoint_path, load_checkpoint

log = logging.getLogger("asyncrl")

# what may change when a run is resumed; the rest comes from the run's own config
# (sweep: a preset of the sweeper only; objective: what the run reports, not how it trains)
RESUMABLE_KEYS = ("total_frames", "workers", "serial", "max_worker_restarts", "stall_seconds",
                  "log.", "eval.", "checkpoint.", "objective", "sweep")

RUN_FILES = ("status.json", "episodes.csv", "checkpoints/last.pt")  # a run was here
ROOM_TO_START = 1 << 20  # Hydra's config files, the first log lines, a first checkpoint


@dataclass(frozen=True)
class PreparedRun:
    """A run checked and ready to start.

    ``config``: the typed, checked config; ``run_dir``: where it writes (claimed for a new
    run, the run's own for a resume); ``resume_from``: the checkpoint a resumed run goes on
    from; ``start_from``: the checkpoint a new run takes its first weights from
    (``init_from``); ``composed``: the composed config with its ``hydra`` node (Hydra's
    logging and run-directory settings), None where the sweeper composed it or for a resume
    (whose config is its checkpoint's; ``launch`` then composes Hydra's settings alone).
    """

    config: Any
    run_dir: Path
    overrides: tuple[str, ...]
    resume_from: Checkpoint | None = None
    start_from: Checkpoint | None = None
    composed: DictConfig | None = None
    env: EnvInfo | None = None  # the spaces, where preparing read them (for init_from)

    @property
    def resumed(self) -> bool:
        return self.resume_from is not None


def register_schemas() -> None:
    """Put every schema in Hydra's ConfigStore under ``schema/<group>/<name>``, and the
    sweeper under ``hydra/sweeper/asyncrl_loguniform``: before anything composes a config
    (a preset may choose the sweeper)."""
    from hydra.core.config_store import ConfigStore

    from hydra_plugins.asyncrl_sweeper import register_sweeper

    register_sweeper()
    cs = ConfigStore.instance()
    cs.store(name="train_schema", node=TrainConfig)
    for group, options in SCHEMAS.items():
        for name, node in options.items():
            cs.store(group=f"schema/{group}", name=name, node=node)


def prepare_run(overrides: Sequence[str], run_dir: str | Path | None = None, *,
                composed: DictConfig | None = None, in_a_sweep: bool = False,
                claim: bool = True) -> PreparedRun:
    """Compose (unless ``composed`` is given), check and resolve one run's start.

    ``overrides``: the command line's (``hydra.*`` ones included; they set ``composed``'s
    hydra node). ``run_dir``: where a new run writes; None takes ``hydra.run.dir=`` from
    the overrides, else a fresh ``outputs/DATE/TIME``; refused if it already holds a run.
    ``composed``: a config the sweeper composed for one run of a multirun, whose directory
    Hydra made (``run_dir`` then names it and nothing is claimed). ``in_a_sweep``: such a
    run, whose ``+experiment=`` preset may name the sweep's own settings on a resume.
    ``claim=False``: check only (``asyncrl --cfg job``, a multirun's pre-check).
    """
    overrides = tuple(overrides)
    mine = [o for o in overrides if not o.startswith(("hydra.", "hydra/"))]
    resume = _resume_dir(mine) if composed is None else (
        Path(composed.resume) if composed.resume else None)
    if resume is not None:
        config, saved = resumed_config(resume, mine, in_a_sweep=in_a_sweep)
        typed = to_typed(config)
        validate(typed)
        check_room(resume)
        return PreparedRun(typed, resume, overrides, resume_from=saved)
    sweep_run = composed is not None
    if composed is None:
        composed = compose_config(overrides, with_hydra=True)
        task = _task_part(composed)
    else:  # a multirun's run: the sweeper composed it; its switches are checked here
        task, composed = composed, None
        check_switches(task, mine)
    typed = to_typed(task)
    validate(typed)
    # the environment's spaces, read once: init_from's fit needs them, and the launcher
    # takes them from here (otherwise it reads them itself, beside the workers' start)
    env = env_info(typed.env) if typed.init_from is not None else None
    start = requested_start(typed, env)
    if sweep_run or not claim:  # Hydra made a sweep's run directory; a check claims none
        where = Path(run_dir or ".")
    else:
        if run_dir is None and any(o.startswith("hydra.run.dir=") for o in overrides):
            run_dir = composed.hydra.run.dir
        where = claim_run_dir(None if run_dir is None else Path(run_dir))
    return PreparedRun(typed, where, overrides, start_from=start, composed=composed, env=env)


def _task_part(composed: DictConfig) -> DictConfig:
    """The run's own config: the composed one less its ``hydra`` node."""
    task = composed.copy()
    with read_write(task), open_dict(task):
        del task["hydra"]
    return task


def run_prepared(prepared: PreparedRun) -> int:
    """Train the prepared run; returns the process exit code."""
    from asyncrl.run.launcher import Launcher

    cfg = prepared.config
    if prepared.resumed:
        log.info("resuming %s from T=%s", prepared.run_dir, f"{prepared.resume_from.frames:,}")
    warn_if_cores_shared(cfg.workers)
    code = Launcher(cfg, prepared.run_dir, prepared.resume_from, prepared.start_from,
                    prepared.env).run()
    if code == exit_codes.OK and cfg.eval.final_episodes > 0:
        evaluate_final_weights(prepared.run_dir, cfg.eval.final_episodes)
    return code


def warn_if_cores_shared(workers: int) -> None:
    """Say so when workers outnumber the cores: they then take turns on them, and the
    paper's speed-ups (one thread a core, Table 2) are not what such a run measures."""
    cores = usable_cpus()
    if workers > cores:
        log.warning("workers=%d on %d cores: the workers share the cores, so a run's hours "
                    "and speed-ups are not the paper's one thread a core", workers, cores)


def evaluate_final_weights(run_dir: Path, episodes: int) -> None:
    """``eval.final_episodes``: the finished run's last checkpoint plays that many episodes
    (no-op starts, as ``asyncrl-eval``), into ``RUN/evaluation.json``."""
    import argparse

    from asyncrl.commands.evaluate import evaluate

    log.info("evaluating the final weights over %d episodes", episodes)
    evaluate(argparse.Namespace(source=run_dir, episodes=episodes, seed=0, epsilon=None,
                                video=None, output=None))


def _resume_dir(overrides: Sequence[str]) -> Path | None:
    for item in overrides:
        if item.startswith("resume="):
            value = item.split("=", 1)[1]
            if value in ("", "null"):
                return None
            return Path(value)
    return None


def resumed_config(resume: Path, overrides: Sequence[str], in_a_sweep: bool = False
                   ) -> tuple[DictConfig, Checkpoint]:
    """The config a run was started with, plus the few keys a resume may change; and the
    checkpoint it came from. ``in_a_sweep``: a sweep resuming one of its runs, whose
    ``+experiment=`` preset only names the sweep's own settings (``hydra.sweeper.*``)."""
    if not resume.is_dir():
        raise UserError(f"resume={resume}: no such run directory")
    saved = load_checkpoint(checkpoint_path(resume))
    changes = [o for o in overrides if not o.startswith("resume=")]
    # presets that only name Hydra's settings here: the run's config is its checkpoint's
    hydra_only = ("sweep=", "experiment=") if in_a_sweep else ("sweep=",)
    values = [o for o in changes if not o.lstrip("+").startswith(hydra_only)]
    refused = [o for o in values if not o.split("=", 1)[0].lstrip("+~").startswith(RESUMABLE_KEYS)]
    if refused:
        raise UserError(f"resume takes its config from {resume}; only "
                        f"{', '.join(k.rstrip('.') for k in RESUMABLE_KEYS)} may change "
                        f"(got {' '.join(refused)})")
    try:
        cfg = OmegaConf.merge(typed_config(saved.config), OmegaConf.from_dotlist(values))
        check_switches(cfg, values)
    except UserError:
        raise
    except Exception as exc:
        raise UserError(describe_config_error(exc)) from None
    cfg.resume = str(resume)
    return cfg, saved  # type: ignore[return-value]


def claim_run_dir(given: Path | None) -> Path:
    """Give a new run a directory no other run uses.

    A directory given (``hydra.run.dir=``, ``run_dir=``) that already holds a run is refused
    (the checkpoint would be overwritten, a second run appended to the CSVs). Without one,
    ``outputs/DATE/TIME`` is made here with an exclusive mkdir, so two runs started in the
    same second get ``TIME`` and ``TIME-2``.
    """
    if given is not None:
        found = [name for name in RUN_FILES if (given / name).exists()]
        if found:
            raise UserError(f"{given} already holds a run ({found[0]}); continue it with "
                            f"resume={given}, or choose another hydra.run.dir")
        check_room(given)
        return given
    now = datetime.now()
    day = Path("outputs") / now.strftime("%Y-%m-%d")
    check_room(day)
    stamp = now.strftime("%H-%M-%S")
    for suffix in itertools.count(1):
        run_dir = day / (stamp if suffix == 1 else f"{stamp}-{suffix}")
        try:
            run_dir.mkdir(parents=True)
        except FileExistsError:
            continue
        except OSError as error:
            raise UserError(f"cannot make the run directory {run_dir}: "
                            f"{error.strerror or error}") from None
        return run_dir
    raise AssertionError("unreachable")


def check_room(run_dir: Path) -> None:
    """Refuse a run directory that cannot be written, or whose disk is full, before
    anything is written there: the run would fail with a traceback and leave a half-made
    directory behind. (A disk that fills up later fails the run in one line.)"""
    existing = run_dir.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"cannot write the run directory {run_dir}: {existing} is not a "
                        "writable directory")
    free = shutil.disk_usage(existing).free
    if free < ROOM_TO_START:
        raise UserError(f"no room for a run in {run_dir}: {free:,} bytes free on its disk, "
                        f"at least {ROOM_TO_START:,} needed")


def launch(prepared: PreparedRun) -> int:
    """Run a prepared run as Hydra runs a job: the process's logging configured by
    ``hydra.job_logging`` (the console and ``RUN/asyncrl.log``; the CLI's process, whose
    job this is), and, for a new run, the composed config, Hydra's settings and the
    overrides saved in ``RUN/.hydra``; returns the exit code. A face that goes on in its
    process afterwards (the API, the probe) uses ``run_log`` and ``run_prepared``."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.utils import configure_log

    composed = prepared.composed
    if composed is None:  # a resume: Hydra's settings alone; its .hydra/ files stay as made
        hydra_only = [o for o in prepared.overrides if o.startswith(("hydra.", "hydra/"))]
        composed = compose_config([*hydra_only, "hydra.output_subdir=null"], with_hydra=True)
    run_dir = prepared.run_dir
    with read_write(composed), open_dict(composed):
        composed.hydra.run.dir = str(run_dir)
        composed.hydra.runtime.output_dir = str(run_dir.absolute())
    HydraConfig.instance().set_config(composed)
    run_dir.mkdir(parents=True, exist_ok=True)
    if composed.hydra.output_subdir is not None:
        saved = run_dir / composed.hydra.output_subdir
        saved.mkdir(parents=True, exist_ok=True)
        hydra_part = OmegaConf.masked_copy(composed, "hydra")
        for name, part in (("config.yaml", _task_part(composed)), ("hydra.yaml", hydra_part),
                           ("overrides.yaml", composed.hydra.overrides.task)):
            (saved / name).write_text(OmegaConf.to_yaml(part), encoding="utf-8")
    configure_log(composed.hydra.job_logging, composed.hydra.verbose)
    return run_prepared(prepared)


RUN_LOG = "asyncrl.log"  # the run's log file, as conf/config.yaml's hydra.job.name names it


@contextmanager
def run_log(run_dir: Path, console: bool = False) -> Iterator[None]:
    """The run's log lines into ``RUN_LOG``, and with ``console`` onto stdout as the CLI
    prints them, for a face that goes on in its process afterwards (the Python API, the
    probe); the process's other loggers and handlers are left as they are."""
    run_dir.mkdir(parents=True, exist_ok=True)
    handlers: list[logging.Handler] = [logging.FileHandler(run_dir / RUN_LOG)]
    if console:
        handlers.append(logging.StreamHandler(sys.stdout))
    formatter = logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s")
    logger = logging.getLogger("asyncrl")
    previous = logger.level
    for handler in handlers:
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
            handler.close()
        logger.setLevel(previous)
