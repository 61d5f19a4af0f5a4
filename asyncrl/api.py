"""The Python face of asyncrl: train a run and get its result, load a trained agent.

    import asyncrl
    result = asyncrl.train(["env=classic/cartpole", "workers=2"])
    agent = asyncrl.load(result.run_dir)

``asyncrl`` exposes these lazily (its ``__getattr__``), so ``import asyncrl`` stays light.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asyncrl.commands.cli import check_room, claim_run_dir, resumed_config
from asyncrl.commands.cli import train as train_job
from asyncrl.commands.start_from import requested_start
from asyncrl.config.checks import validate
from asyncrl.config.compose import compose_config, register_schemas
from asyncrl.errors import UserError
from asyncrl.run_files.objective import read_outcome

RUN_LOG = "asyncrl.log"  # the name Hydra's job logging gives the CLI's run log


@dataclass(frozen=True)
class TrainResult:
    """What ``train`` hands back; ``score`` is the config's ``objective`` (NaN where the
    run has none: it failed, diverged, was interrupted or finished no episode)."""

    run_dir: Path
    status: str
    score: float
    exit_code: int
    reason: str = ""


def train(overrides: Sequence[str] = (), run_dir: str | Path | None = None) -> TrainResult:
    """Run one job as ``asyncrl OVERRIDES`` would, in this process; returns its result.

    ``overrides`` are the CLI's (``["env=classic/cartpole", "lr=1e-3"]``, ``resume=DIR``
    included). ``run_dir`` is where the run writes (refused if it already holds a run);
    None gives ``outputs/DATE/TIME`` like the CLI. A mistake in what is asked raises
    ``asyncrl.UserError`` with the CLI's one-line message, before anything is written.
    """
    args = list(overrides)
    hydra_keys = [a for a in args if a.startswith(("hydra.", "hydra/", "-"))]
    if hydra_keys:
        raise UserError(f"{hydra_keys[0]}: asyncrl.train takes config keys only; give the "
                        "run's directory as run_dir=")
    register_schemas()
    cfg = compose_config(args)
    if cfg.resume:
        where = Path(cfg.resume)
        validate(_to_object(resumed_config(where, args)[0]))
        check_room(where)
    else:
        typed = _to_object(cfg)
        validate(typed)
        requested_start(typed)
        where = _claim(run_dir)
    with _run_log(where):
        code = train_job(cfg, where, args)
    outcome = read_outcome(where, str(cfg.objective))
    return TrainResult(where, outcome.status, outcome.score, code, outcome.reason)


def _to_object(cfg: Any) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.to_object(cfg)


def _claim(run_dir: str | Path | None) -> Path:
    """The CLI's choice of a fresh run directory, with its refusals."""
    given = [] if run_dir is None else [f"hydra.run.dir={run_dir}"]
    try:
        claimed = claim_run_dir(given)
    except UserError as err:  # the CLI's message, in the words of this face
        raise UserError(str(err).replace("hydra.run.dir", "run_dir")) from None
    return Path(next(a for a in claimed if a.startswith("hydra.run.dir=")).split("=", 1)[1])


@contextmanager
def _run_log(run_dir: Path) -> Iterator[None]:
    """The run's log lines into ``RUN_LOG``, as Hydra's job logging does for the CLI."""
    run_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(run_dir / RUN_LOG)
    handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - "
                                           "%(message)s"))
    logger = logging.getLogger("asyncrl")
    previous = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
        handler.close()


class Agent:
    """A trained policy acting as evaluation does (``asyncrl-eval``): A3C samples pi, the
    value-based methods act epsilon-greedily with ``algo.eval_epsilon`` or ``epsilon``."""

    def __init__(self, run_dir: Path, seed: int = 0, epsilon: float | None = None) -> None:
        from asyncrl.commands.saved_policy import load_policy, set_evaluation_epsilon
        from asyncrl.learning.evaluate import eval_policy

        self.run_dir = run_dir
        self.config, model, saved = load_policy(run_dir)
        self.frames = saved.frames  # T of the checkpoint the weights come from
        # None for A3C; for a value-based run the rate its act() explores with
        self.epsilon = set_evaluation_epsilon(self.config, epsilon, "epsilon=")
        self._policy = eval_policy(self.config, model, seed)

    def make_env(self, render_mode: str | None = None) -> Any:
        """A gymnasium environment with the run's preprocessing, as evaluations see it
        (raw scores: no reward clipping, a lost life is not an episode's end)."""
        from asyncrl.envs import make_env

        return make_env(self.config.env, render_mode=render_mode, evaluation=True)

    def reset_state(self) -> Any:
        """The recurrent state to start an episode with (None for a feed-forward net)."""
        return self._policy.initial_state()

    def act(self, obs: Any, state: Any = None) -> tuple[Any, Any]:
        """The action for ``obs`` and the state to pass with the next observation."""
        return self._policy.act(obs, state)


def load(run_dir: str | Path, seed: int = 0, epsilon: float | None = None) -> Agent:
    """The agent saved in ``run_dir`` (a run directory or a checkpoint file); ``seed``
    draws its random choices, as ``asyncrl-eval --seed`` does, and ``epsilon`` replaces a
    value-based run's ``algo.eval_epsilon``, as ``asyncrl-eval --epsilon`` does."""
    source = Path(run_dir)
    if not source.exists():
        raise UserError(f"no run directory or checkpoint at {source}")
    return Agent(source, seed, epsilon)
