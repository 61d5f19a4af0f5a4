"""The paper's learning-rate sweeps as a Hydra sweeper: ``asyncrl -m +sweep=lr_loguniform``.

Each run gets its own random initialisation (a distinct ``seed``) and a learning rate drawn
from LogUniform(low, high); every other setting is fixed (paper, Section 5: 50 runs per
game, LogUniform(1e-4, 1e-2)). Discrete sweeps on the same command line
(``optimizer=shared_rmsprop,rmsprop``) each get their own ``trials`` runs, so one command
runs the optimizer comparison.

The runs go through whichever Hydra launcher is configured: the basic one runs them one
after another (each run already uses every core), a cluster launcher spreads them out.
``sweep.json`` in the sweep directory lists every run with its lr, seed and status. A run
that fails or diverges is recorded with its reason and the sweep goes on. Running the same
command again with the same ``hydra.sweep.dir`` resumes the sweep: finished, failed and
diverged runs are kept, interrupted ones continue from their checkpoints, missing ones
start.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.utils import JobReturn, JobStatus
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

from asyncrl import exit_codes
from asyncrl.errors import UserError
from asyncrl.run_files.checkpoint import checkpoint_path
from asyncrl.run_files.run_status import DONE, FAILED, FINISHED, read_status
from asyncrl.sweep_range import check_range

log = logging.getLogger(__name__)

MANIFEST = "sweep.json"
SEED_BASE = 1  # run k of a sweep gets seed SEED_BASE + k


@dataclass
class LogUniformSweeperConf:
    _target_: str = "hydra_plugins.asyncrl_sweeper.LogUniformSweeper"
    trials: int = 50          # runs per combination of the command line's discrete sweeps
    param: str = "lr"         # the key drawn log-uniformly
    # the range; null: each run's environment's own (env.sweep_lr_low/high), so a sweep
    # over Atari and MuJoCo draws each run from its family's range
    low: float | None = None
    high: float | None = None
    sampler_seed: int = 0     # the draws of lr; the same seed gives the same sweep
    max_batch_size: int = 1   # runs handed to the launcher at once (a cluster launcher: more)
    params: dict[str, str] = field(default_factory=dict)  # fixed or a,b,c values, as on the
    # command line; an experiment preset names its games, optimizers or worker counts here


@dataclass
class GridSweeperConf(LogUniformSweeperConf):
    """``hydra/sweeper=asyncrl_grid``: the same sweep with nothing drawn: each combination of
    the discrete sweeps runs ``trials`` times, with seeds 1, 2, ... (``+experiment=atari57``)."""

    trials: int = 1           # seeds per combination: seed=1 .. trials
    param: str | None = None  # nothing drawn: every run keeps the config's own lr


def log_uniform(rng: np.random.Generator, low: float, high: float, size: int) -> np.ndarray:
    """exp(U(log low, log high)): every decade of the range equally likely."""
    return _to_log_range(rng.random(size), low, high)


def _to_log_range(unit: np.ndarray, low: float, high: float) -> np.ndarray:
    # the arithmetic of numpy's uniform(log low, log high): a sweep planned before ranges
    # became per run draws the same values, so its sweep.json still resumes
    return np.exp(math.log(low) + (math.log(high) - math.log(low)) * unit)


# the (low, high) of the environment a run's overrides choose
EnvRange = Callable[[list[str]], tuple[float, float]]


@dataclass
class PlannedRun:
    subdir: str
    overrides: list[str]
    value: float | None  # the drawn value; None in a grid (nothing drawn)
    seed: int
    low: float | None
    high: float | None

    def record(self) -> dict[str, Any]:
        return {"subdir": self.subdir, "overrides": self.overrides, "value": self.value,
                "seed": self.seed, "low": self.low, "high": self.high}


def plan(arguments: Sequence[str], param: str | None, low: float | None, high: float | None,
         trials: int, sampler_seed: int, env_range: EnvRange | None = None) -> list[PlannedRun]:
    """Every run of the sweep: the discrete combinations times ``trials`` log-uniform draws
    (``param`` None: ``trials`` seeds, 1 to ``trials``, nothing drawn).

    ``arguments`` are Hydra override strings; ``a=x,y`` sweeps ``a`` over x and y. A bound
    that is None comes from ``env_range`` of each combination's overrides: the range of
    the environment that combination runs.
    """
    parser = OverridesParser.create()
    fixed: list[str] = []
    choices: list[list[str]] = []
    for override in parser.parse_overrides(list(arguments)):
        key = override.get_key_element()
        if key == param or key == "seed":
            raise UserError(f"{key} is what the sweep sets for each run; leave it off the "
                            "command line")
        if override.is_sweep_override():
            if not override.is_discrete_sweep():
                raise UserError(f"{key}: only lists of values (a=x,y) combine with the "
                                "log-uniform sweep")
            choices.append([f"{key}={v}" for v in override.sweep_string_iterator()])
        else:
            fixed.append(f"{key}={override.get_value_element_as_str()}")
    combos = [list(c) for c in itertools.product(*choices)] or [[]]
    if param is None:
        return [PlannedRun(subdir="".join(f"{_dir_name(o)}/" for o in combo) + f"seed_{s}",
                           overrides=[*fixed, *combo, f"seed={s}"], value=None, seed=s,
                           low=None, high=None)
                for combo in combos for s in range(SEED_BASE, SEED_BASE + trials)]
    unit = np.random.default_rng(sampler_seed).random(trials * len(combos))
    runs = []
    for c, combo in enumerate(combos):
        lo, hi = _combination_range(low, high, env_range, [*fixed, *combo])
        values = _to_log_range(unit[c * trials:(c + 1) * trials], lo, hi)
        prefix = "".join(f"{_dir_name(o)}/" for o in combo)
        for t in range(trials):
            k = c * trials + t
            value = float(f"{values[t]:.6g}")
            runs.append(PlannedRun(subdir=f"{prefix}run_{t:03d}",
                                   overrides=[*fixed, *combo, f"{param}={value}",
                                              f"seed={SEED_BASE + k}"],
                                   value=value, seed=SEED_BASE + k, low=lo, high=hi))
    return runs


def _combination_range(low: float | None, high: float | None, env_range: EnvRange | None,
                       overrides: list[str]) -> tuple[float, float]:
    if low is None or high is None:
        if env_range is None:
            raise ValueError("a bound of the range is None and no env_range gives it")
        env_low, env_high = env_range(overrides)
        low = env_low if low is None else low
        high = env_high if high is None else high
    check_range(low, high, 1)
    return low, high


def describe_ranges(runs: Sequence[PlannedRun]) -> str:
    """``LogUniform(1e-05, 0.1)``, or each range with its number of runs when they differ."""
    if all(run.low is None for run in runs):
        return "nothing drawn"
    counts: dict[tuple[float | None, float | None], int] = {}
    for run in runs:
        counts[(run.low, run.high)] = counts.get((run.low, run.high), 0) + 1
    if len(counts) == 1:
        (low, high), = counts
        return f"LogUniform({low:g}, {high:g})"
    return ", ".join(f"LogUniform({low:g}, {high:g}) for {n}" for (low, high), n in counts.items()
                     if low is not None and high is not None)


def _dir_name(override: str) -> str:
    """``optimizer=rmsprop`` -> ``optimizer-rmsprop``: a path Hydra's grammar accepts."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", override)


class LogUniformSweeperBase(Sweeper):
    def __init__(self, trials: int, param: str | None, low: float | None, high: float | None,
                 sampler_seed: int, max_batch_size: int,
                 params: dict[str, str] | None = None) -> None:
        self.params = dict(params or {})
        self.trials = int(trials)
        self.param = None if param is None else str(param)
        self.low = None if low is None else float(low)
        self.high = None if high is None else float(high)
        self.sampler_seed = int(sampler_seed)
        self.max_batch_size = max(1, int(max_batch_size))
        self.config: DictConfig | None = None
        self.launcher: Any = None
        self.hydra_context: HydraContext | None = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction,
              config: DictConfig) -> None:
        from hydra.core.plugins import Plugins

        self.hydra_context = hydra_context
        self.config = config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config)

    def sweep(self, arguments: list[str]) -> list[Sequence[JobReturn]]:
        assert self.config is not None
        sweep_dir = Path(self.config.hydra.sweep.dir)
        try:
            runs = self._checked_plan(sweep_dir, arguments)
        except UserError as err:
            # Hydra would print a traceback and exit 1: refuse as the CLI does, with nothing
            # written yet
            print(f"asyncrl: error: {err}", file=sys.stderr)
            raise SystemExit(exit_codes.USER_ERROR) from None
        sweep_dir.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
        self._write_manifest(sweep_dir, runs)
        todo = []
        for index, run in enumerate(runs):
            status = read_status(sweep_dir / run.subdir)
            if needs_final_evaluation(sweep_dir / run.subdir, status):
                log.info("sweep: %s finished without its final evaluation; evaluating it",
                         run.subdir)
            elif status is not None and status.get("status") in DONE:
                log.info("sweep: %s already %s; kept", run.subdir, status["status"])
                continue
            todo.append((index, run))
        log.info("sweep: %d runs of %s ~ %s, %d to do, in %s", len(runs),
                 self.param or "seed", describe_ranges(runs), len(todo), sweep_dir)
        returns: list[Sequence[JobReturn]] = []
        try:
            for start in range(0, len(todo), self.max_batch_size):
                chunk = todo[start : start + self.max_batch_size]
                batch = [self._job_overrides(sweep_dir, run) for _, run in chunk]
                results = self.launcher.launch(batch, initial_job_idx=chunk[0][0])
                for (_, run), result in zip(chunk, results, strict=True):
                    self._after(sweep_dir, run, result)
                returns.append(results)
                self._write_manifest(sweep_dir, runs)
                log.info("sweep: %s", progress_line(sweep_dir))
        finally:  # Ctrl-C too: the manifest says "interrupted" for the run it stopped
            self._write_manifest(sweep_dir, runs)
        return returns

    def _checked_plan(self, sweep_dir: Path, arguments: list[str]) -> list[PlannedRun]:
        if self.low is not None and self.high is not None:
            check_range(self.low, self.high, self.trials)
        if self.trials < 1:
            raise UserError(f"hydra.sweeper.trials={self.trials}: need at least 1 run")
        given = {a.split("=", 1)[0].lstrip("+~") for a in arguments}
        preset = [f"{k}={v}" for k, v in self.params.items() if k not in given]
        return self._planned(sweep_dir, [*preset, *arguments])

    def _planned(self, sweep_dir: Path, arguments: list[str]) -> list[PlannedRun]:
        runs = plan(arguments, self.param, self.low, self.high, self.trials, self.sampler_seed,
                    env_range=self._env_range)
        saved = sweep_dir / MANIFEST
        if saved.exists():  # resuming: the runs must be the ones the sweep started with
            before = json.loads(saved.read_text())
            if [r["overrides"] for r in before["runs"]] != [r.overrides for r in runs]:
                raise UserError(f"{sweep_dir} holds a different sweep; resume it with the "
                                "command that started it, or choose another hydra.sweep.dir")
        return runs

    def _env_range(self, overrides: list[str]) -> tuple[float, float]:
        """The sweep range of the environment these overrides choose, composed as the
        launcher will compose the run (the primary config's env is only the default's)."""
        assert self.hydra_context is not None and self.config is not None
        try:
            cfg = self.hydra_context.config_loader.load_sweep_config(self.config, overrides)
            return float(cfg.env.sweep_lr_low), float(cfg.env.sweep_lr_high)
        except Exception as exc:
            first = next((ln for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
            raise UserError(f"cannot compose a run of the sweep ({' '.join(overrides)}): "
                            f"{first}") from None

    @staticmethod
    def _job_overrides(sweep_dir: Path, run: PlannedRun) -> list[str]:
        run_dir = sweep_dir / run.subdir
        where = f"hydra.sweep.subdir={run.subdir}"
        if checkpoint_path(run_dir).exists():  # interrupted: continue where it stopped
            # the sweep and experiment presets stay: the sweep's own hydra.sweeper.* settings
            # refer to them (the run's config comes from its checkpoint)
            presets = [o for o in run.overrides
                       if o.lstrip("+").startswith(("sweep=", "experiment="))]
            return [*presets, f"resume={run_dir}", where]
        return [*run.overrides, where]

    @staticmethod
    def _after(sweep_dir: Path, run: PlannedRun, result: JobReturn) -> None:
        """A job that raised (bad config, crash) has no status of its own yet: record it."""
        run_dir = sweep_dir / run.subdir
        if result.status == JobStatus.FAILED:
            from asyncrl.run_files.run_status import write_status

            error = result._return_value
            reason = f"{type(error).__name__}: {error}".splitlines()[0]
            recorded = read_status(run_dir) or {}
            if recorded.get("status") not in DONE:
                write_status(run_dir, FAILED, reason=reason)
            log.error("sweep: %s failed: %s", run.subdir, reason)

    def _write_manifest(self, sweep_dir: Path, runs: list[PlannedRun]) -> None:
        records = []
        for run in runs:
            status = read_status(sweep_dir / run.subdir) or {"status": "pending"}
            records.append({**run.record(), "status": status.get("status"),
                            "reason": status.get("reason", ""),
                            "recent_score": status.get("recent_score")})
        manifest = {"param": self.param, "low": self.low, "high": self.high,
                    "trials": self.trials, "sampler_seed": self.sampler_seed, "runs": records}
        tmp = sweep_dir / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(manifest, indent=1))
        tmp.replace(sweep_dir / MANIFEST)


def needs_final_evaluation(run_dir: Path, status: dict[str, Any] | None) -> bool:
    """A finished run whose ``eval.final_episodes`` evaluation was stopped before it wrote
    ``evaluation.json``: resuming it evaluates it (the training is done)."""
    if status is None or status.get("status") != FINISHED or (run_dir / "evaluation.json"
                                                             ).exists():
        return False
    try:
        return int(OmegaConf.load(run_dir / "config.yaml").eval.final_episodes) > 0
    except Exception:  # noqa: BLE001 - a run from before the key, or a damaged config
        return False


def progress_line(sweep_dir: Path) -> str:
    """Runs done / running / failed / pending, and the best score so far."""
    manifest = json.loads((sweep_dir / MANIFEST).read_text())
    counts: dict[str, int] = {}
    best: tuple[float, str] | None = None
    for run in manifest["runs"]:
        status = read_status(sweep_dir / run["subdir"]) or {"status": "pending"}
        counts[status["status"]] = counts.get(status["status"], 0) + 1
        score = status.get("recent_score")
        if status["status"] == "finished" and score is not None and (
                best is None or score > best[0]):
            drawn = (f", {manifest['param']}={run['value']:g}"
                     if manifest.get("param") and run.get("value") is not None else "")
            best = (float(score), f"{run['subdir']}{drawn}")
    # scores of different games do not compare: no best over a sweep across environments
    if len({o for run in manifest["runs"] for o in run["overrides"] if o.startswith("env=")}) > 1:
        best = None
    order = ("finished", "running", "interrupted", "failed", "diverged", "pending")
    parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
    text = f"{len(manifest['runs'])} runs: " + ", ".join(parts)
    if best is not None:
        text += f"; best recent score {best[0]:.2f} ({best[1]})"
    return text
