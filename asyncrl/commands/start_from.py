"""``init_from=``: the checkpoint a new run starts from, read and fitted to the run's
network before the run's directory is made, so that a missing, damaged or ill-fitting one
is refused in one line and leaves nothing on disk. ``prepare_run`` reads it once and hands
it to the launcher."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from asyncrl.envs import EnvInfo, env_info
from asyncrl.errors import UserError
from asyncrl.run_files.checkpoint import Checkpoint, checkpoint_path, checkpoint_source


def start_checkpoint(cfg: Any, env: EnvInfo | None = None) -> Checkpoint:
    """The checkpoint ``cfg.init_from`` names (a file, or a run directory's last.pt), once
    its weights are known to fit the network ``cfg`` builds and its T leaves frames to
    train."""
    from asyncrl.run_files.checkpoint import load_checkpoint

    where = str(cfg.init_from)
    path = Path(where)
    if not where or not (path.is_file() or checkpoint_path(path).is_file()):
        raise UserError(f"init_from={where!r}: no checkpoint file, nor a run directory "
                        "with checkpoints/last.pt, at that path")
    path, _ = checkpoint_source(path)
    saved = load_checkpoint(path)
    if saved.frames >= cfg.total_frames:
        raise UserError(f"init_from={where}: its T={saved.frames:,} is at or past "
                        f"total_frames={cfg.total_frames:,}, which leaves nothing to train")
    _check_fit(cfg, saved, path, env if env is not None else env_info(cfg.env))
    return saved


def _check_fit(cfg: Any, saved: Checkpoint, path: Path, env: EnvInfo) -> None:
    """The weights load into the network this config builds (checked for each config: a
    sweep over networks starts each of its runs from one file)."""
    from asyncrl.algos import algorithm_class
    from asyncrl.nets import build_model
    from asyncrl.run_files.checkpoint import load_model_weights

    model = build_model(cfg, env.observation_space, env.action_space,
                        algorithm_class(cfg.algo.name).head)
    try:
        load_model_weights(model, saved.model, path)
    except UserError as err:
        raise UserError(f"init_from: {err}") from None


def requested_start(cfg: Any, env: EnvInfo | None = None) -> Checkpoint | None:
    """``start_checkpoint`` for a new run whose config names one; None otherwise (a resumed
    run goes on from its own checkpoint, whatever init_from it started with)."""
    if cfg.init_from is not None and not cfg.resume:
        return start_checkpoint(cfg, env)
    return None


def absolute_init_from(args: list[str]) -> list[str]:
    """``init_from=`` made absolute, so the run's config.yaml says which file it began
    from wherever it is read (a list of values to sweep is left as given)."""
    out = []
    for arg in args:
        if arg.startswith("init_from="):
            value = arg.split("=", 1)[1]
            if value not in ("", "null") and "," not in value and not Path(value).is_absolute():
                arg = f"init_from={os.path.abspath(value)}"
        out.append(arg)
    return out
