"""``asyncrl``: compose the config with Hydra, check it, hand it to the launcher.

Before Hydra creates a run directory the command line is composed once here and checked,
so a typo, an unknown option or an impossible value ends in one line on stderr and leaves
nothing on disk.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import shutil
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from asyncrl import exit_codes
from asyncrl.commands.start_from import absolute_init_from, requested_start
from asyncrl.config.checks import validate
from asyncrl.config.compose import (
    check_multirun,
    check_sweep,
    check_switches,
    compose_config,
    describe_config_error,
    register_schemas,
    renamed_preset_notes,
)
from asyncrl.config.machine import usable_cpus
from asyncrl.config.paths import config_dir
from asyncrl.config.saved import typed_config
from asyncrl.errors import UserError
from asyncrl.run import start_method
from asyncrl.run_files.checkpoint import Checkpoint, checkpoint_path, load_checkpoint
from asyncrl.run_files.objective import read_outcome, sweeper_value

log = logging.getLogger("asyncrl")

# what may change when a run is resumed; the rest comes from the run's own config
# (sweep: a preset of the sweeper only; objective: what the run reports, not how it trains)
RESUMABLE_KEYS = ("total_frames", "workers", "serial", "max_worker_restarts", "stall_seconds",
                  "log.", "eval.", "checkpoint.", "objective", "sweep")

_exit_code = 0


def main() -> None:
    """Console entry point of ``asyncrl`` and ``python -m asyncrl``."""
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        from asyncrl.commands.usage import USAGE

        print(USAGE, end="")
        sys.exit(0)
    register_schemas()
    for note in renamed_preset_notes(sys.argv[1:]):
        print(f"asyncrl: note: {note}", file=sys.stderr)
    try:
        args = prepare_arguments(sys.argv[1:])
        if trains_in_processes(args):
            start_method.start_early()
        sys.argv = [sys.argv[0], *args]
        _hydra_entry()
    except UserError as err:
        _fail(err)
    except KeyboardInterrupt:  # before the launcher took over: nothing to save
        sys.exit(exit_codes.INTERRUPTED)
    sys.exit(_exit_code)


def trains_in_processes(args: list[str]) -> bool:
    """Whether the checked command line goes on to start worker processes (not ``--cfg``,
    ``--info`` and the like, not ``serial=true``)."""
    flags = [a for a in args if a.startswith("-") and a not in ("-m", "--multirun")]
    return not flags and "serial=true" not in args


def _fail(err: UserError) -> None:
    print(f"asyncrl: error: {err}", file=sys.stderr)
    sys.exit(exit_codes.USER_ERROR)


FRAMES_IN_E_NOTATION = re.compile(r"^([\w.]*frames)=(\d+(?:\.\d+)?[eE]\+?\d+)$")


def whole_frame_counts(args: list[str]) -> list[str]:
    """``total_frames=1e6`` -> ``total_frames=1000000``: frame counts are integers, and a
    count written in e-notation means a whole number (a fraction is still refused)."""
    out = []
    for arg in args:
        match = FRAMES_IN_E_NOTATION.match(arg)
        if match and float(match.group(2)).is_integer():
            arg = f"{match.group(1)}={int(float(match.group(2)))}"
        out.append(arg)
    return out


def prepare_arguments(args: list[str]) -> list[str]:
    """Check a single run's command line; add what resuming needs. Flags pass through."""
    args = absolute_init_from(whole_frame_counts(args))
    if any(a.startswith(("+sweep=", "+experiment=")) for a in args) and any(
            a in ("-m", "--multirun") for a in args):
        check_sweep([a for a in args if not a.startswith("-") and "=" in a])
    if any(a in ("-m", "--multirun") for a in args):
        words = [a for a in args if not a.startswith("-")]
        # asyncrl's sweeper records each run that fails its check and goes on; Hydra's
        # basic sweeper would end in a traceback, so there every value is checked first
        check_multirun(words, every_value=not any(a.startswith("+sweep=") for a in words),
                       also=requested_start)
        return maximise_scores(args)
    if any(a.startswith("-") for a in args):
        if any(a in ("--cfg", "-c") for a in args):
            # a bad override is refused in one line, as a run's is (Hydra's own message
            # takes several lines and exits 1); the config shown may hold values a run
            # would refuse: it is there to be read
            compose_config([a for a in args if "=" in a and not a.startswith("-")
                            and not a.startswith(("hydra.", "hydra/"))], as_object=True)
            if "--resolve" not in args:
                # unresolved, the config shows ${asyncrl.cpus:} for workers and
                # ${algo.default_lr} for lr: the values a run would use are what one asks for
                args = [*args, "--resolve"]
        return args  # --cfg, --hydra-help ...: Hydra's own business
    overrides = [a for a in args if not a.startswith(("hydra.", "hydra/"))]
    resume = _resume_dir(overrides)
    if resume is None:
        cfg = compose_config(overrides, as_object=True)
        validate(cfg)
        requested_start(cfg)
        return claim_run_dir(args)
    cfg, _ = resumed_config(resume, overrides)
    validate(OmegaConf.to_object(cfg))
    check_room(Path(resume))
    return [*args, f"hydra.run.dir={resume}", "hydra.output_subdir=null"]


def maximise_scores(args: list[str]) -> list[str]:
    """Hydra's Optuna sweeper minimises unless told otherwise; a run's objective is a score,
    so with ``hydra/sweeper=optuna`` and no direction given, the study maximises it."""
    optuna = any(a.startswith("hydra/sweeper=") and a.endswith("optuna") for a in args)
    if optuna and not any(a.startswith("hydra.sweeper.direction=") for a in args):
        return [*args, "hydra.sweeper.direction=maximize"]
    return args


RUN_FILES = ("status.json", "episodes.csv", "checkpoints/last.pt")  # a run was here


def claim_run_dir(args: list[str]) -> list[str]:
    """Give a new run a directory no other run uses.

    A directory named with ``hydra.run.dir=`` that already holds a run is refused (Hydra
    would reuse it: the checkpoint overwritten, a second run appended to the CSVs). Without
    it, ``outputs/DATE/TIME`` is made here with an exclusive mkdir, so two runs started in
    the same second get ``TIME`` and ``TIME-2``.
    """
    given = next((a.split("=", 1)[1] for a in args if a.startswith("hydra.run.dir=")), None)
    if given is not None:
        run_dir = Path(given)
        found = [name for name in RUN_FILES if (run_dir / name).exists()]
        if found:
            raise UserError(f"{run_dir} already holds a run ({found[0]}); continue it with "
                            f"resume={run_dir}, or choose another hydra.run.dir")
        check_room(run_dir)
        return args
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
        return [*args, f"hydra.run.dir={run_dir}"]
    raise AssertionError("unreachable")


ROOM_TO_START = 1 << 20  # Hydra's config files, the first log lines, a first checkpoint


def check_room(run_dir: Path) -> None:
    """Refuse a run directory that cannot be written, or whose disk is full, before Hydra
    writes its config files there: it would fail with a traceback and leave a half-made
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


def train(cfg: DictConfig, run_dir: Path, overrides: Sequence[str] = ()) -> int:
    """Run one training job in ``run_dir``; returns the process exit code."""
    from asyncrl.run.launcher import Launcher

    saved = None
    if cfg.resume:
        run_dir = Path(cfg.resume)
        cfg, saved = resumed_config(run_dir, overrides,
                                    in_a_sweep=HydraConfig.initialized()
                                    and HydraConfig.get().mode == RunMode.MULTIRUN)
        log.info("resuming %s from T=%s", run_dir, f"{saved.frames:,}")
    else:  # a run of a +sweep= multirun, whose other values no check has seen
        check_switches(cfg, overrides)
    train_cfg: Any = OmegaConf.to_object(cfg)
    validate(train_cfg)
    warn_if_cores_shared(train_cfg.workers)
    code = Launcher(train_cfg, run_dir, saved, requested_start(train_cfg)).run()
    if code == exit_codes.OK and train_cfg.eval.final_episodes > 0:
        evaluate_final_weights(run_dir, train_cfg.eval.final_episodes)
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


@hydra.main(version_base="1.3", config_path=str(config_dir()), config_name="config")
def _hydra_entry(cfg: DictConfig) -> float | None:
    """One job; returns its objective, which a tuning sweeper (Optuna) optimises."""
    global _exit_code
    hydra_cfg = HydraConfig.get()
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    run_dir = Path(cfg.resume or hydra_cfg.runtime.output_dir)
    try:
        code = train(cfg, run_dir, hydra_cfg.overrides.task)
    except UserError as err:
        if multirun:  # one bad run of a sweep: the sweeper records it and goes on
            raise
        _fail(err)
        return None
    if multirun and code in exit_codes.STOPPED_BY_A_SIGNAL:
        raise KeyboardInterrupt  # Ctrl-C stops the whole sweep, after this run's checkpoint
    _exit_code = max(_exit_code, code)
    return sweeper_value(read_outcome(run_dir, str(cfg.objective)))
