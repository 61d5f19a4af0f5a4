"""``asyncrl``: a run from the command line, checked before anything is written.

A single run goes through ``prepare_run`` (compose, check, resolve its start: once) and is
launched as Hydra would launch it; a multirun is checked here, then Hydra's sweeper
composes each of its runs, which ``prepare_run`` checks and starts. A typo, an unknown
option or an impossible value ends in one line on stderr and leaves nothing on disk.
"""

from __future__ import annotations

import logging
import re
import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from asyncrl import exit_codes
from asyncrl.commands.prepare import launch, prepare_run, register_schemas, run_prepared
from asyncrl.commands.start_from import absolute_init_from, requested_start
from asyncrl.config.compose import (
    check_multirun,
    check_sweep,
    compose_config,
    renamed_preset_notes,
)
from asyncrl.config.paths import config_dir
from asyncrl.errors import UserError
from asyncrl.run import start_method
from asyncrl.run_files.objective import read_outcome, sweeper_value

log = logging.getLogger("asyncrl")

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
        code = run_command(sys.argv[1:])
    except UserError as err:
        _fail(err)
    except KeyboardInterrupt:  # before the launcher took over: nothing to save
        sys.exit(exit_codes.INTERRUPTED)
    sys.exit(code)


def run_command(args: list[str], check_only: bool = False) -> int:
    """One command line: a single run, a multirun, ``--cfg job`` or Hydra's own flags.
    ``check_only``: refuse what the command would refuse, start nothing (a single run's
    directory is still claimed)."""
    args = absolute_init_from(whole_frame_counts(args))
    if any(a in ("-m", "--multirun") for a in args):
        args = check_multirun_arguments(args)
        return exit_codes.OK if check_only else _hand_to_hydra(args)
    flags = [a for a in args if a.startswith("-")]
    if flags:
        if _shows_the_job_config(args):
            words = [a for a in args if "=" in a and not a.startswith("-")]
            prepared = prepare_run(words, claim=False)
            print(OmegaConf.to_yaml(OmegaConf.structured(prepared.config)), end="")
            return exit_codes.OK
        args = hydra_flag_arguments(args)
        return exit_codes.OK if check_only else _hand_to_hydra(args)
    prepared = prepare_run(args)
    if check_only:
        return exit_codes.OK
    if not prepared.config.serial:
        start_method.start_early()
    return launch(prepared)


def _shows_the_job_config(args: list[str]) -> bool:
    """``--cfg job`` (``-c job``), with ``--resolve`` or not: the config a run would use."""
    rest = [a for a in args if "=" not in a or a.startswith("-")]
    return rest in (["--cfg", "job"], ["-c", "job"], ["--cfg", "job", "--resolve"],
                    ["-c", "job", "--resolve"])


def _hand_to_hydra(args: list[str]) -> int:
    """Hydra's own business: a multirun's sweep, ``--info``, ``--cfg hydra``, ..."""
    if trains_in_processes(args):
        start_method.start_early()
    sys.argv = [sys.argv[0], *args]
    _hydra_entry()
    return _exit_code


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


def check_multirun_arguments(args: list[str]) -> list[str]:
    """Check a multirun's values before Hydra starts any of its runs."""
    if any(a.startswith(("+sweep=", "+experiment=")) for a in args):
        check_sweep([a for a in args if not a.startswith("-") and "=" in a])
    words = [a for a in args if not a.startswith("-")]
    # asyncrl's sweeper records each run that fails its check and goes on; Hydra's basic
    # sweeper would end in a traceback, so there every value is checked first
    check_multirun(words, every_value=not any(a.startswith("+sweep=") for a in words),
                   also=requested_start)
    return maximise_scores(args)


def hydra_flag_arguments(args: list[str]) -> list[str]:
    """``--cfg hydra``, ``--info``, ``--hydra-help``: Hydra's own; a bad override under
    ``--cfg`` is refused in one line, as a run's is (Hydra's message takes several lines)."""
    if any(a in ("--cfg", "-c") for a in args):
        compose_config([a for a in args if "=" in a and not a.startswith("-")
                        and not a.startswith(("hydra.", "hydra/"))])
        if "--resolve" not in args:
            args = [*args, "--resolve"]  # the values a run would use are what one asks for
    return args


def maximise_scores(args: list[str]) -> list[str]:
    """Hydra's Optuna sweeper minimises unless told otherwise; a run's objective is a score,
    so with ``hydra/sweeper=optuna`` and no direction given, the study maximises it."""
    optuna = any(a.startswith("hydra/sweeper=") and a.endswith("optuna") for a in args)
    if optuna and not any(a.startswith("hydra.sweeper.direction=") for a in args):
        return [*args, "hydra.sweeper.direction=maximize"]
    return args


@hydra.main(version_base="1.3", config_path=str(config_dir()), config_name="config")
def _hydra_entry(cfg: DictConfig) -> float | None:
    """One run of a multirun, as the sweeper composed it; returns its objective, which a
    tuning sweeper (Optuna) optimises."""
    global _exit_code
    hydra_cfg = HydraConfig.get()
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    try:
        prepared = prepare_run(list(hydra_cfg.overrides.task), hydra_cfg.runtime.output_dir,
                               composed=cfg, in_a_sweep=multirun)
        code = run_prepared(prepared)
    except UserError as err:
        if multirun:  # one bad run of a sweep: the sweeper records it and goes on
            raise
        _fail(err)
        return None
    if multirun and code in exit_codes.STOPPED_BY_A_SIGNAL:
        raise KeyboardInterrupt  # Ctrl-C stops the whole sweep, after this run's checkpoint
    _exit_code = max(_exit_code, code)
    return sweeper_value(read_outcome(prepared.run_dir, str(prepared.config.objective)))
