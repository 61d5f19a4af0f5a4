"""The Python face of asyncrl: train a run and get its result, load a trained agent.

    import asyncrl
    result = asyncrl.train(["env=classic/cartpole", "workers=2"])
    agent = asyncrl.load(result.run_dir)

``asyncrl`` exposes these lazily (its ``__getattr__``), so ``import asyncrl`` stays light.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asyncrl.commands.prepare import prepare_run, register_schemas, run_log, run_prepared
from asyncrl.errors import UserError
from asyncrl.run_files.objective import read_outcome


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
    try:
        prepared = prepare_run(args, run_dir)
    except UserError as err:  # the CLI's message, in the words of this face
        raise UserError(str(err).replace("hydra.run.dir", "run_dir")) from None
    with run_log(prepared.run_dir):
        code = run_prepared(prepared)
    outcome = read_outcome(prepared.run_dir, str(prepared.config.objective))
    return TrainResult(prepared.run_dir, outcome.status, outcome.score, code, outcome.reason)


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
